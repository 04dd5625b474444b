// cublas_gemm: cuBLAS GEMM timed with tessel::do_bench, the peer of tessel's
// GEMM. Row-major C[M,N] = A[M,K] B[K,N], f16 or bf16 in and out, f32
// accumulate (cublasGemmEx, CUBLAS_COMPUTE_32F), random inputs.
//
//   cublas_gemm [--sizes 4096,8192,2048x4096x1024] [--dtypes f16,bf16]
//               [--layouts NN,NT,TN] [--warmup-ms 25] [--rep-ms 100]
//               [--no-flush] [--out FILE]
//
// A size N means N x N x N; MxNxK gives all three. The layout letters say
// whether A and B are stored as written (N) or transposed (T: A as [K,M],
// B as [N,K]). Prints JSON (docs/benchmarks.md) to stdout or FILE; exits 1
// when there is no GPU (the JSON then says why).
#include <cublas_v2.h>
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "jit/context.h"
#include "jit/device_buffer.h"
#include "tessel/bench_report.h"
#include "tessel/dtype.h"
#include "tessel/host_tensor.h"
#include "tessel/profiler.h"

namespace tessel::bench {
namespace {

struct GemmSize {
  int64_t m, n, k;
};

struct Flags {
  std::vector<GemmSize> sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  std::vector<std::string> dtypes = {"f16", "bf16"};
  std::vector<std::string> layouts = {"NN"};
  double warmup_ms = 25;
  double rep_ms = 100;
  bool flush_l2 = true;
  std::string out;
};

std::optional<GemmSize> ParseSize(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, 'x');
  std::vector<int64_t> dims;
  for (const std::string& p : parts) {
    int64_t d;
    if (!absl::SimpleAtoi(p, &d) || d <= 0) return std::nullopt;
    dims.push_back(d);
  }
  if (dims.size() == 1) return GemmSize{dims[0], dims[0], dims[0]};
  if (dims.size() == 3) return GemmSize{dims[0], dims[1], dims[2]};
  return std::nullopt;
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
      }
      return std::string(argv[++i]);
    };
    if (arg == "--no-flush") {
      flags.flush_l2 = false;
      continue;
    }
    absl::StatusOr<std::string> v = value();
    if (!v.ok()) return v.status();
    if (arg == "--sizes") {
      flags.sizes.clear();
      for (const std::string& s :
           std::vector<std::string>(absl::StrSplit(*v, ','))) {
        std::optional<GemmSize> size = ParseSize(s);
        if (!size) {
          return absl::InvalidArgumentError(
              absl::StrCat("bad size '", s, "' (want N or MxNxK)"));
        }
        flags.sizes.push_back(*size);
      }
    } else if (arg == "--dtypes") {
      flags.dtypes = absl::StrSplit(*v, ',');
      for (const std::string& d : flags.dtypes) {
        if (d != "f16" && d != "bf16") {
          return absl::InvalidArgumentError(
              absl::StrCat("dtype '", d, "' is not f16 or bf16"));
        }
      }
    } else if (arg == "--layouts") {
      flags.layouts = absl::StrSplit(*v, ',');
      for (const std::string& l : flags.layouts) {
        if (l != "NN" && l != "NT" && l != "TN" && l != "TT") {
          return absl::InvalidArgumentError(
              absl::StrCat("layout '", l, "' is not NN, NT, TN or TT"));
        }
      }
    } else if (arg == "--warmup-ms" || arg == "--rep-ms") {
      double ms;
      if (!absl::SimpleAtod(*v, &ms)) {
        return absl::InvalidArgumentError(absl::StrCat(arg, ": not a number"));
      }
      (arg == "--warmup-ms" ? flags.warmup_ms : flags.rep_ms) = ms;
    } else if (arg == "--out") {
      flags.out = *v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
  }
  return flags;
}

std::string CublasError(cublasStatus_t status, const char* call) {
  return absl::StrCat(call, " failed: ", cublasGetStatusName(status), " (",
                      cublasGetStatusString(status), ")");
}

// `count` random elements of `dtype` (never zero, in [-1, 1]) on the device.
// Values come from a table of 65536 seeded draws, picked by a fast generator:
// random enough for timing, and quick for 8192^2 matrices.
absl::StatusOr<jit::DeviceBuffer> RandomDeviceMatrix(DataType dtype,
                                                     int64_t count,
                                                     uint64_t seed) {
  constexpr int64_t kTable = 1 << 16;
  HostTensor table(dtype, {kTable});
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < kTable; ++i) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const double magnitude = 1.0 / 32 + unit * (1 - 1.0 / 32);
    table.set_flat(i, (rng() & 1) ? magnitude : -magnitude);
  }
  const auto* bits = reinterpret_cast<const uint16_t*>(table.data());
  std::vector<uint16_t> host(static_cast<size_t>(count));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint16_t& x : host) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = bits[state >> 48];
  }
  absl::StatusOr<jit::DeviceBuffer> buffer =
      jit::DeviceBuffer::Allocate(host.size() * sizeof(uint16_t));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status s =
          buffer->CopyFromHost(host.data(), host.size() * sizeof(uint16_t));
      !s.ok()) {
    return s;
  }
  return buffer;
}

absl::StatusOr<BenchResult> TimeGemm(cublasHandle_t handle, const GemmSize& s,
                                     const std::string& dtype_name,
                                     const std::string& layout,
                                     const Flags& flags) {
  const DataType dtype = dtype_name == "f16" ? f16 : bf16;
  const cudaDataType_t cuda_type =
      dtype_name == "f16" ? CUDA_R_16F : CUDA_R_16BF;
  absl::StatusOr<jit::DeviceBuffer> a = RandomDeviceMatrix(dtype, s.m * s.k, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<jit::DeviceBuffer> b = RandomDeviceMatrix(dtype, s.k * s.n, 2);
  if (!b.ok()) return b.status();
  absl::StatusOr<jit::DeviceBuffer> c =
      jit::DeviceBuffer::Allocate(s.m * s.n * 2);
  if (!c.ok()) return c.status();

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
  // sees B first. A row-major [R, C] matrix is a column-major [C, R] one.
  const bool a_transposed = layout[0] == 'T';  // A stored as [K, M]
  const bool b_transposed = layout[1] == 'T';  // B stored as [N, K]
  const cublasOperation_t op_b = b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ld_b = b_transposed ? s.k : s.n;
  const int64_t ld_a = a_transposed ? s.m : s.k;
  const float alpha = 1.0f, beta = 0.0f;
  const BenchOptions options = {.warmup_ms = flags.warmup_ms,
                                .rep_ms = flags.rep_ms,
                                .flush_l2 = flags.flush_l2,
                                .quantiles = ReportQuantiles()};
  return do_bench(
      [&](CUstream stream) -> absl::Status {
        cublasStatus_t status = cublasSetStream(handle, stream);
        if (status != CUBLAS_STATUS_SUCCESS) {
          return absl::InternalError(CublasError(status, "cublasSetStream"));
        }
        status = cublasGemmEx(
            handle, op_b, op_a, static_cast<int>(s.n), static_cast<int>(s.m),
            static_cast<int>(s.k), &alpha,
            reinterpret_cast<const void*>(b->ptr()), cuda_type,
            static_cast<int>(ld_b), reinterpret_cast<const void*>(a->ptr()),
            cuda_type, static_cast<int>(ld_a), &beta,
            reinterpret_cast<void*>(c->ptr()), cuda_type, static_cast<int>(s.n),
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (status != CUBLAS_STATUS_SUCCESS) {
          return absl::InternalError(CublasError(status, "cublasGemmEx"));
        }
        return absl::OkStatus();
      },
      options);
}

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "cublas_gemm: " << flags.status().message() << "\n"
              << "usage: cublas_gemm [--sizes N|MxNxK,...] [--dtypes f16,bf16]"
                 " [--layouts NN,NT,TN,TT] [--warmup-ms MS] [--rep-ms MS]"
                 " [--no-flush] [--out FILE]\n";
    return 2;
  }
  BenchReport report("cublas_gemm");
  // The GPU check goes through tessel's driver loader, so that a machine
  // without one gets the same clear message as every other tessel tool.
  if (absl::StatusOr<CUcontext> context = jit::PrimaryContext(0);
      !context.ok()) {
    report.extra()["error"] = context.status().ToString();
    (void)report.Write(flags->out);
    std::cerr << "cublas_gemm: " << context.status() << "\n";
    return 1;
  }
  cublasHandle_t handle = nullptr;
  if (cublasStatus_t s = cublasCreate(&handle); s != CUBLAS_STATUS_SUCCESS) {
    report.extra()["error"] = CublasError(s, "cublasCreate");
    (void)report.Write(flags->out);
    std::cerr << "cublas_gemm: " << CublasError(s, "cublasCreate") << "\n";
    return 1;
  }
  int version = 0;
  if (cublasGetVersion(handle, &version) == CUBLAS_STATUS_SUCCESS) {
    report.extra()["cublas_version"] = version;
  }
  bool all_ok = true;
  for (const GemmSize& size : flags->sizes) {
    for (const std::string& dtype : flags->dtypes) {
      for (const std::string& layout : flags->layouts) {
        const Measurement m = {
            .kernel = "gemm",
            .impl = "cublas",
            .variant = layout,
            .dtype = dtype,
            .shape = {{"M", size.m}, {"N", size.n}, {"K", size.k}},
            .size = size.m == size.n && size.n == size.k
                        ? absl::StrCat(size.m, "^3")
                        : absl::StrCat(size.m, "x", size.n, "x", size.k),
            .flops = 2.0 * size.m * size.n * size.k,
            .bytes =
                2.0 * (size.m * size.k + size.k * size.n + size.m * size.n)};
        absl::StatusOr<BenchResult> r =
            TimeGemm(handle, size, dtype, layout, *flags);
        if (r.ok()) {
          report.Add(m, *r);
          std::fprintf(stderr, "cublas %s %s %s: %.4f ms, %.1f TFLOP/s\n",
                       m.size.c_str(), dtype.c_str(), layout.c_str(),
                       r->median_ms, m.flops / (r->median_ms * 1e-3) / 1e12);
        } else {
          all_ok = false;
          report.AddError(m, r.status());
          std::cerr << "cublas " << m.size << " " << dtype << " " << layout
                    << ": " << r.status() << "\n";
        }
      }
    }
  }
  cublasDestroy(handle);
  if (absl::Status s = report.Write(flags->out); !s.ok()) {
    std::cerr << "cublas_gemm: " << s << "\n";
    return 1;
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) { return tessel::bench::Main(argc, argv); }
