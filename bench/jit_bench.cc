// jit_bench: what the JIT layer costs.
//
//   jit_bench [--out FILE] [--arch sm_90a[,sm_80...]] [--manifest FILE]
//
// Prints JSON: cold NVRTC compile of a ~100-line tiled GEMM kernel, a warm
// disk hit (to a cubin; with a GPU also to a callable kernel, module load
// included), an in-memory hit, and (GPU only) launch overhead of
// LoadedKernel::Launch against a raw cuLaunchKernel. Medians of many runs,
// timed with std::chrono. Goals: disk hit to callable < 1 ms, memory hit
// < 2 us, launch within 1 us of raw cuLaunchKernel.
//
// With --manifest (samples/kernels.json), also every kernel of the manifest
// compiled cold for each --arch (default sm_90a,sm_80), one at a time, with
// the time of tessel's passes and codegen and of NVRTC's front end, NVVM and
// ptxas (bench/kernel_breakdown.h): the "manifest" object of the JSON.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#ifdef TESSEL_JIT_BENCH_MANIFEST
#include "bench/kernel_breakdown.h"
#endif
#include "bench/median.h"
#include "jit/context.h"
#include "jit/driver_api.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "jit/nvrtc.h"
#include "nlohmann/json.hpp"

namespace {

using namespace tessel::jit;
using tessel::bench::Median;
using Clock = std::chrono::steady_clock;

// A representative kernel: shared-memory tiled SGEMM with register blocking.
constexpr char kTiledGemm[] = R"(
#include "bench_prelude.cuh"

// C[M,N] = alpha * A[M,K] * B[K,N] + beta * C, row-major.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
tiled_gemm(const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C, int M, int N, int K, float alpha,
           float beta) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);
  const int block_row = blockIdx.y * BM;
  const int block_col = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Stage A transposed so the inner loop reads consecutive rows.
    for (int idx = tid; idx < BM * BK; idx += kThreads) {
      const int r = idx / BK, c = idx % BK;
      const int gr = block_row + r, gc = k0 + c;
      As[c][r] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
    }
    for (int idx = tid; idx < BK * BN; idx += kThreads) {
      const int r = idx / BN, c = idx % BN;
      const int gr = k0 + r, gc = block_col + c;
      Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a_frag[TM];
      float b_frag[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a_frag[i] = As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          acc[i][j] = tessel_fma(a_frag[i], b_frag[j], acc[i][j]);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + ty * TM + i;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = block_col + tx * TN + j;
      if (col >= N) continue;
      float* out = &C[row * N + col];
      *out = alpha * acc[i][j] + (beta == 0.0f ? 0.0f : beta * *out);
    }
  }
}

extern "C" __global__ void empty_kernel(float* p, int n) {
  if (n < 0) p[0] = 1.0f;
}
)";

constexpr char kPrelude[] = R"(
#pragma once
__device__ __forceinline__ float tessel_fma(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
)";

// The machine the times were taken on: compile times differ by host (and
// by the minute on a shared one), so a report names its CPU.
nlohmann::json Host() {
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0 &&
        line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return {{"cpu", cpu}, {"threads", std::thread::hardware_concurrency()}};
}

CudaSource GemmSource() {
  return CudaSource{.text = kTiledGemm,
                    .entry = "tiled_gemm<128, 128, 8, 8, 8>",
                    .headers = {{"bench_prelude.cuh", kPrelude}}};
}

// Median of `runs` timings of `body`, in microseconds; `before` runs untimed.
double TimeUs(
    int runs, const std::function<void()>& body,
    const std::function<void()>& before = [] {}) {
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    before();
    const auto start = Clock::now();
    body();
    samples.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start)
            .count());
  }
  return Median(samples);
}

[[noreturn]] void Die(const absl::Status& status) {
  std::cerr << "jit_bench: " << status << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  std::string arch;
  std::string manifest;
  std::vector<std::string> archs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--arch" && i + 1 < argc) {
      archs = absl::StrSplit(argv[++i], ',', absl::SkipEmpty());
      if (archs.empty()) {
        std::cerr << "jit_bench: --arch: no arch given\n";
        return 2;
      }
      arch = archs.front();
    } else if (arg == "--manifest" && i + 1 < argc) {
      manifest = argv[++i];
    } else {
      std::cerr << "usage: jit_bench [--out FILE] [--arch sm_XX[,sm_YY...]] "
                   "[--manifest FILE]\n";
      return 2;
    }
  }
  for (const std::string& a : archs) {
    CompileOptions options;
    options.arch = a;
    if (absl::StatusOr<std::string> known = ResolveArch(options); !known.ok()) {
      std::cerr << "jit_bench: --arch: " << known.status().message() << "\n";
      return 2;
    }
  }
  // The report comes after minutes of compiles: its file must be writable
  // before they start.
  if (!out_path.empty()) {
    std::error_code ec;
    const std::filesystem::path parent =
        std::filesystem::absolute(out_path, ec).parent_path();
    if (ec || std::filesystem::is_directory(out_path, ec) ||
        !std::filesystem::is_directory(parent, ec)) {
      std::cerr << "jit_bench: --out " << out_path
                << ": not a file in a folder that exists\n";
      return 2;
    }
  }
  const absl::StatusOr<const DriverApi*> driver = Driver();
  const bool gpu = driver.ok() && PrimaryContext(0).ok();
  if (arch.empty()) {
    absl::StatusOr<std::string> detected = gpu ? DetectArch() : "sm_90a";
    if (!detected.ok()) Die(detected.status());
    arch = *detected;
  }
  const CompileOptions options{.arch = arch};
  const CudaSource source = GemmSource();

  std::string dir_template =
      (std::filesystem::temp_directory_path() / "tessel-jit-bench-XXXXXX")
          .string();
  const std::string cache_dir = mkdtemp(dir_template.data());

  nlohmann::json report;
  report["arch"] = arch;
  report["gpu"] = gpu;
  report["host"] = Host();
  report["nvrtc_version"] = NvrtcVersion();
  report["kernel"] = source.entry;
  report["kernel_source_lines"] =
      std::count(source.text.begin(), source.text.end(), '\n');

  // Cold NVRTC compile: no cache anywhere.
  std::vector<double> compile_ms;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<Cubin> cubin = Compile(source, options);
    if (!cubin.ok()) Die(cubin.status());
    compile_ms.push_back(cubin->compile_ms);
    report["cubin_bytes"] = cubin->image.size();
  }
  report["cold_compile_ms"] = Median(compile_ms);

  KernelCache cache({.disk = {.dir = cache_dir}});
  if (absl::StatusOr<CachedCubin> warm = cache.GetCubin(source, options);
      !warm.ok()) {
    Die(warm.status());
  }
  constexpr int kRuns = 500;
  report["disk_hit_to_cubin_us"] = TimeUs(
      kRuns,
      [&] {
        absl::StatusOr<CachedCubin> hit = cache.GetCubin(source, options);
        if (!hit.ok() || hit->origin != CubinOrigin::kDisk) {
          Die(absl::InternalError("expected a disk hit"));
        }
      },
      [&] { cache.ClearMemory(); });
  report["memory_hit_us"] = TimeUs(20000, [&] {
    absl::StatusOr<CachedCubin> hit = cache.GetCubin(source, options);
    if (!hit.ok()) Die(hit.status());
  });

  const KernelSignature gemm_signature = {
      ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::Pointer(),
      ArgSpec::I32(),     ArgSpec::I32(),     ArgSpec::I32(),
      ArgSpec::F32(),     ArgSpec::F32()};
  if (gpu) {
    report["disk_hit_to_callable_us"] = TimeUs(
        kRuns,
        [&] {
          absl::StatusOr<LoadedKernel> kernel =
              cache.GetKernel(source, options, gemm_signature);
          if (!kernel.ok()) Die(kernel.status());
        },
        [&] { cache.ClearMemory(); });
    report["memory_hit_to_callable_us"] = TimeUs(20000, [&] {
      absl::StatusOr<LoadedKernel> kernel =
          cache.GetKernel(source, options, gemm_signature);
      if (!kernel.ok()) Die(kernel.status());
    });

    // Launch overhead: an empty kernel, enqueue time per launch.
    CudaSource empty = source;
    empty.entry = "empty_kernel";
    absl::StatusOr<LoadedKernel> kernel =
        cache.GetKernel(empty, options, {ArgSpec::Pointer(), ArgSpec::I32()});
    if (!kernel.ok()) Die(kernel.status());
    const DriverApi& cu = **driver;
    CUdeviceptr null_pointer = 0;
    int n = 1;
    void* raw_params[] = {&null_pointer, &n};
    KernelArgs args;
    args.AddPointer(null_pointer).Add(n);
    constexpr int kBatch = 200;
    const auto sync = [&] {
      if (cu.cuCtxSynchronize() != CUDA_SUCCESS) {
        Die(absl::InternalError("cuCtxSynchronize failed"));
      }
    };
    std::vector<double> raw, ours, ours_with_args;
    for (int round = 0; round < 50; ++round) {
      raw.push_back(TimeUs(
                        1,
                        [&] {
                          for (int i = 0; i < kBatch; ++i) {
                            cu.cuLaunchKernel(kernel->function(), 1, 1, 1, 32,
                                              1, 1, 0, nullptr, raw_params,
                                              nullptr);
                          }
                        },
                        sync) /
                    kBatch);
      ours.push_back(
          TimeUs(
              1,
              [&] {
                for (int i = 0; i < kBatch; ++i) {
                  if (!kernel->Launch({.grid = {1}, .block = {32}}, args)
                           .ok()) {
                    Die(absl::InternalError("launch failed"));
                  }
                }
              },
              sync) /
          kBatch);
      ours_with_args.push_back(
          TimeUs(
              1,
              [&] {
                for (int i = 0; i < kBatch; ++i) {
                  KernelArgs fresh;
                  fresh.AddPointer(null_pointer).Add(n);
                  if (!kernel->Launch({.grid = {1}, .block = {32}}, fresh)
                           .ok()) {
                    Die(absl::InternalError("launch failed"));
                  }
                }
              },
              sync) /
          kBatch);
    }
    sync();
    report["launch_raw_us"] = Median(raw);
    report["launch_tessel_us"] = Median(ours);
    report["launch_tessel_with_args_us"] = Median(ours_with_args);
    report["launch_overhead_us"] = Median(ours) - Median(raw);
  }
  report["goals"] = {{"disk_hit_to_callable_us", 1000},
                     {"memory_hit_us", 2},
                     {"launch_overhead_us", 1}};
  std::error_code ec;
  std::filesystem::remove_all(cache_dir, ec);
  if (!manifest.empty()) {
#ifndef TESSEL_JIT_BENCH_MANIFEST
    std::cerr << "jit_bench: built without the tools: no --manifest\n";
    return 2;
#else
    if (archs.empty()) archs = {"sm_90a", "sm_80"};
    absl::StatusOr<nlohmann::json> breakdown =
        tessel::bench::KernelBreakdown(manifest, archs);
    if (!breakdown.ok()) {
      std::cerr << "jit_bench: " << breakdown.status().message() << "\n";
      return 2;
    }
    report["manifest"] = *std::move(breakdown);
#endif
  }

  const std::string text = report.dump(2) + "\n";
  if (out_path.empty()) {
    std::cout << text;
  } else {
    std::ofstream out(out_path);
    out << text;
    if (!out.flush()) {
      std::cerr << "jit_bench: cannot write " << out_path << "\n";
      return 1;
    }
  }
  return 0;
}
