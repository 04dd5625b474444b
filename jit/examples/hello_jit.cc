// hello_jit: a hand-written kernel through tessel's JIT (jit/ alone: no tile
// IR, no compile()).
//
//   hello_jit [--arch sm_90a]
//
// Compiles saxpy through the kernel cache (TESSEL_CACHE_DIR, else
// ~/.cache/tessel; TESSEL_CACHE=off to skip it), says whether it was a hit
// and how long it took, and where a GPU is present runs it and checks the
// result. Run it twice: the second run is a disk hit. Exits non-zero on
// failure.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "jit/context.h"
#include "jit/counters.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "jit/nvrtc.h"

namespace {

using namespace tessel::jit;

constexpr char kSaxpy[] = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    y[i] = a * x[i] + y[i];
  }
}
)";

constexpr char kUsage[] =
    "usage: hello_jit [--arch ARCH]   (also --arch=ARCH, --help, --version)\n"
    "Compiles a saxpy kernel for ARCH (default: the GPU's, else sm_90a)\n"
    "through the kernel cache (TESSEL_CACHE_DIR, else ~/.cache/tessel;\n"
    "TESSEL_CACHE=off to skip it), twice: the second is a hit. With a GPU it\n"
    "runs the kernel and checks the result.\n";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "hello_jit: %s\n", status.ToString().c_str());
  return 1;
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("hello_jit (NVRTC %s)\n", NvrtcVersion().c_str());
      return 0;
    }
    if (arg == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else if (arg.rfind("--arch=", 0) == 0) {
      arch = arg.substr(7);
    } else {
      std::fprintf(stderr,
                   "hello_jit: unexpected argument \"%s\"; see --help\n",
                   arg.c_str());
      return 2;
    }
  }
  const bool gpu = Driver().ok() && PrimaryContext(0).ok();
  if (arch.empty() && !gpu) arch = "sm_90a";  // compile for the H200 anyway

  KernelCache& cache = KernelCache::Default();
  std::printf("cache: %s\n", cache.disk().enabled()
                                 ? cache.disk().directory().root().c_str()
                                 : cache.disk().disabled_reason().c_str());
  const CudaSource source{.text = kSaxpy, .entry = "saxpy"};
  const CompileOptions options{.arch = arch};
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<CachedCubin> cubin = cache.GetCubin(source, options);
    if (!cubin.ok()) return Fail(cubin.status());
    std::printf("saxpy for %s: %s (%s) in %.3f ms, %zu bytes\n",
                cubin->cubin->arch.c_str(),
                cubin->origin == CubinOrigin::kCompiled ? "miss" : "hit",
                CubinOriginName(cubin->origin), MsSince(start),
                cubin->cubin->image.size());
  }
  const JitCounters counters = GetJitCounters();
  std::printf("counters: nvrtc=%llu memory_hits=%llu disk_hits=%llu\n",
              static_cast<unsigned long long>(counters.nvrtc_compiles),
              static_cast<unsigned long long>(counters.memory_hits),
              static_cast<unsigned long long>(counters.disk_hits));
  if (!gpu) {
    std::printf("no GPU: compiled only\n");
    return 0;
  }

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<LoadedKernel> kernel = cache.GetKernel(
      source, options,
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::F32(), ArgSpec::I32()});
  if (!kernel.ok()) return Fail(kernel.status());
  std::printf("loaded in %.3f ms\n", MsSince(start));

  constexpr int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.5f;
    y[i] = static_cast<float>(i % 7);
  }
  absl::StatusOr<DeviceBuffer> dx = DeviceBuffer::Allocate(n * sizeof(float));
  if (!dx.ok()) return Fail(dx.status());
  absl::StatusOr<DeviceBuffer> dy = DeviceBuffer::Allocate(n * sizeof(float));
  if (!dy.ok()) return Fail(dy.status());
  if (absl::Status s = dx->CopyFromHost(x.data(), n * sizeof(float)); !s.ok()) {
    return Fail(s);
  }
  if (absl::Status s = dy->CopyFromHost(y.data(), n * sizeof(float)); !s.ok()) {
    return Fail(s);
  }
  KernelArgs args;
  args.AddPointer(dx->ptr()).AddPointer(dy->ptr()).Add(2.0f).Add(n);
  if (absl::Status s = kernel->Launch({.grid = {1024}, .block = {256}}, args);
      !s.ok()) {
    return Fail(s);
  }
  if (absl::Status s = SynchronizeStream(nullptr); !s.ok()) return Fail(s);
  std::vector<float> result(n);
  if (absl::Status s = dy->CopyToHost(result.data(), n * sizeof(float));
      !s.ok()) {
    return Fail(s);
  }
  for (int i = 0; i < n; ++i) {
    const float expected = 2.0f * x[i] + y[i];
    if (std::fabs(result[i] - expected) > 1e-5f * std::fabs(expected)) {
      std::fprintf(stderr, "hello_jit: y[%d] = %g, expected %g\n", i, result[i],
                   expected);
      return 1;
    }
  }
  std::printf("ran saxpy on %s over %d elements: ok\n",
              arch.empty() ? "the GPU" : arch.c_str(), n);
  return 0;
}
