// tessel::aot::Kernel: picks the cubin of the launch's device, loads it once
// per context and launches it the way tessel's JIT launcher does (a
// persistent grid capped at what runs at once, clusters through
// cuLaunchKernelEx, dynamic shared memory above 48 KB opted into).
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "src/aot_runtime/driver.h"
#include "tessel/aot_runtime.h"

namespace tessel::aot {
namespace {

using internal::Check;
using internal::Driver;

// 90 and 'a' of "sm_90a"; false for anything else.
bool ParseArch(const char* arch, int* number, char* suffix) {
  const std::string a = arch;
  if (a.rfind("sm_", 0) != 0) return false;
  size_t i = 3;
  int n = 0;
  while (i < a.size() && a[i] >= '0' && a[i] <= '9')
    n = n * 10 + (a[i++] - '0');
  if (i == 3 || n < 10) return false;
  *number = n;
  *suffix = i < a.size() ? a[i] : '\0';
  return i + (i < a.size() ? 1 : 0) == a.size();
}

// How well a cubin of `arch` fits a device of compute capability
// major.minor: -1 not at all (another major, a newer minor, an arch-specific
// cubin of another minor), else higher is closer.
int Fit(const char* arch, int major, int minor) {
  int n = 0;
  char suffix = 0;
  if (!ParseArch(arch, &n, &suffix)) return -1;
  const int arch_major = n / 10, arch_minor = n % 10;
  if (arch_major != major || arch_minor > minor) return -1;
  if (suffix == 'a' && arch_minor != minor) return -1;
  return arch_minor * 2 + (suffix == 'a' ? 1 : 0);
}

constexpr int kDefaultSmemLimit = 48 * 1024;

}  // namespace

std::string GpuUnavailableReason() {
  const Driver* cu = nullptr;
  if (Status s = internal::LoadDriver(&cu); !s.ok()) return s.message();
  CUdevice device = 0;
  if (Status s = Check(*cu, cu->cuDeviceGet(&device, 0), "cuDeviceGet(0)");
      !s.ok()) {
    return s.message();
  }
  return "";
}

Status Synchronize(CUstream_st* stream) {
  const Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  if (stream != nullptr) {
    return Check(*cu, cu->cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  CUcontext context = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::ResolveContext(*cu, nullptr, &context));
  internal::ScopedContext scoped(*cu, context);
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  return Check(*cu, cu->cuCtxSynchronize(), "cuCtxSynchronize");
}

struct Kernel::Modules {
  struct Loaded {
    CUcontext context = nullptr;
    unsigned long long context_id = 0;
    int variant = -1;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
  };
  std::mutex mu;
  std::vector<Loaded> loaded;  // never unloaded: launches may run at exit
};

Kernel::Kernel(const char* name, const KernelVariant* variants, int count)
    : name_(name),
      variants_(variants),
      count_(count),
      modules_(std::make_unique<Modules>()) {}

Kernel::~Kernel() = default;

Status Kernel::Prepare(CUstream_st* stream, LaunchSite* site) const {
  const Driver* cu = nullptr;
  if (Status s = internal::LoadDriver(&cu); !s.ok()) {
    return Status(s.code(), std::string(name_) + ": " + s.message());
  }
  CUcontext context = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::ResolveContext(*cu, stream, &context));
  internal::ScopedContext scoped(*cu, context);
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  CUdevice device = 0;
  TESSEL_AOT_RETURN_IF_ERROR(
      Check(*cu, cu->cuCtxGetDevice(&device), "cuCtxGetDevice"));
  int major = 0, minor = 0, sms = 0;
  TESSEL_AOT_RETURN_IF_ERROR(
      Check(*cu,
            cu->cuDeviceGetAttribute(
                &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            "cuDeviceGetAttribute"));
  TESSEL_AOT_RETURN_IF_ERROR(
      Check(*cu,
            cu->cuDeviceGetAttribute(
                &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
            "cuDeviceGetAttribute"));
  TESSEL_AOT_RETURN_IF_ERROR(
      Check(*cu,
            cu->cuDeviceGetAttribute(
                &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            "cuDeviceGetAttribute"));
  int best = -1, best_fit = -1;
  std::string archs;
  for (int i = 0; i < count_; ++i) {
    archs += std::string(archs.empty() ? "" : ", ") + variants_[i].arch;
    const int fit = Fit(variants_[i].arch, major, minor);
    if (fit > best_fit) best = i, best_fit = fit;
  }
  if (best < 0) {
    return Status(StatusCode::kUnavailable,
                  std::string(name_) + ": no cubin for this sm_" +
                      std::to_string(major * 10 + minor) +
                      " device (compiled for " + archs +
                      "; add its arch to tessel-aot's --arch)");
  }
  site->context = context;
  site->device = device;
  site->variant = best;
  site->multiprocessors = sms;
  site->stream = stream;
  return Status();
}

Status Kernel::Launch(const LaunchSite& site, const uint32_t grid_in[3],
                      void* const* args, int arg_count) const {
  (void)arg_count;  // the generated code passes the kernel's own count
  const Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  const KernelVariant& v = variants_[site.variant];
  const CUcontext context = static_cast<CUcontext>(site.context);
  internal::ScopedContext scoped(*cu, context);
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  const std::string what = std::string(name_) + " (" + v.arch + ")";

  unsigned long long context_id = 0;
  if (cu->cuCtxGetId != nullptr) cu->cuCtxGetId(context, &context_id);
  CUfunction function = nullptr;
  {
    std::lock_guard<std::mutex> lock(modules_->mu);
    for (const Modules::Loaded& l : modules_->loaded) {
      if (l.context == context && l.context_id == context_id &&
          l.variant == site.variant) {
        function = l.function;
      }
    }
    if (function == nullptr) {
      Modules::Loaded l{context, context_id, site.variant};
      if (Status s = Check(*cu, cu->cuModuleLoadData(&l.module, v.cubin),
                           "cuModuleLoadData");
          !s.ok()) {
        return Status(s.code(), what + ": loading its cubin: " + s.message());
      }
      if (Status s = Check(
              *cu, cu->cuModuleGetFunction(&l.function, l.module, v.entry),
              std::string("cuModuleGetFunction(") + v.entry + ")");
          !s.ok()) {
        cu->cuModuleUnload(l.module);
        return Status(s.code(), what + ": " + s.message());
      }
      if (v.dynamic_smem_bytes > kDefaultSmemLimit) {
        if (Status s = Check(
                *cu,
                cu->cuFuncSetAttribute(
                    l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    v.dynamic_smem_bytes),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                    std::to_string(v.dynamic_smem_bytes) + ")");
            !s.ok()) {
          cu->cuModuleUnload(l.module);
          return Status(StatusCode::kResourceExhausted,
                        what + ": the device does not give a block " +
                            std::to_string(v.dynamic_smem_bytes) +
                            " bytes of shared memory: " + s.message());
        }
      }
      modules_->loaded.push_back(l);
      function = l.function;
    }
  }

  uint32_t grid[3] = {grid_in[0], grid_in[1], grid_in[2]};
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(v.cluster_size);
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  auto fill_config = [&] {
    config.gridDimX = grid[0], config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = static_cast<unsigned>(v.threads);
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(v.dynamic_smem_bytes);
    config.hStream = site.stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
  };
  if (v.cluster_size > 1 && (cu->cuLaunchKernelEx == nullptr ||
                             cu->cuOccupancyMaxActiveClusters == nullptr)) {
    return Status(StatusCode::kUnavailable,
                  what + ": clusters of " + std::to_string(v.cluster_size) +
                      " blocks need a CUDA 12 driver (cuLaunchKernelEx)");
  }
  if (v.persistent && v.cluster_size <= 1) {
    // One block per SM, each looping over the tiles.
    grid[0] = std::min(grid[0], static_cast<uint32_t>(site.multiprocessors));
  } else if (v.persistent) {
    // As many clusters as run at once, each looping over its tiles.
    fill_config();
    int clusters = 0;
    TESSEL_AOT_RETURN_IF_ERROR(Check(
        *cu, cu->cuOccupancyMaxActiveClusters(&clusters, function, &config),
        what + ": cuOccupancyMaxActiveClusters"));
    grid[0] = std::min(
        grid[0], static_cast<uint32_t>(std::max(clusters, 1) * v.cluster_size));
  }
  if (v.cluster_size <= 1) {
    return Check(
        *cu,
        cu->cuLaunchKernel(function, grid[0], grid[1], grid[2],
                           static_cast<unsigned>(v.threads), 1, 1,
                           static_cast<unsigned>(v.dynamic_smem_bytes),
                           site.stream, const_cast<void**>(args), nullptr),
        what + ": cuLaunchKernel");
  }
  if (grid[0] % static_cast<uint32_t>(v.cluster_size) != 0) {
    return Status(StatusCode::kInvalidArgument,
                  what + ": clusters of " + std::to_string(v.cluster_size) +
                      " blocks need a grid of a multiple of them, not " +
                      std::to_string(grid[0]));
  }
  fill_config();
  return Check(*cu,
               cu->cuLaunchKernelEx(&config, function, const_cast<void**>(args),
                                    nullptr),
               what + ": cuLaunchKernelEx");
}

}  // namespace tessel::aot
