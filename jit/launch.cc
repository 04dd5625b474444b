#include "jit/launch.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/context.h"
#include "jit/counters.h"
#include "jit/cubin_params.h"
#include "jit/driver_api.h"
#include "jit/loaded_module.h"

namespace tessel::jit {
namespace {

using internal::LoadedModule;

std::string KindName(ArgKind kind) {
  switch (kind) {
    case ArgKind::kPointer:
      return "ptr";
    case ArgKind::kInt:
      return "i";
    case ArgKind::kFloat:
      return "f";
    case ArgKind::kBytes:
      return "bytes";
  }
  return "?";
}

absl::Status RaiseDynamicSmem(const LoadedModule& const_module,
                              uint32_t bytes) {
  auto& module = const_cast<LoadedModule&>(const_module);
  if (bytes > static_cast<uint32_t>(module.max_dynamic_smem_bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "kernel '", module.entry, "' asks for ", bytes,
        " bytes of dynamic shared memory; the device allows at most ",
        module.max_dynamic_smem_bytes, " per block (its opt-in limit ",
        module.max_dynamic_smem_bytes + module.static_smem_bytes, " less ",
        module.static_smem_bytes, " static)"));
  }
  absl::MutexLock lock(&module.raise_mu);
  if (static_cast<int>(bytes) <= module.dynamic_smem_limit.load()) {
    return absl::OkStatus();
  }
  ScopedContext current(*module.api, module.context);
  if (!current.status().ok()) return current.status();
  if (absl::Status s = TESSEL_CU_CALL(
          *module.api,
          cuFuncSetAttribute(module.function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(bytes)));
      !s.ok()) {
    return s;
  }
  module.dynamic_smem_limit.store(static_cast<int>(bytes));
  return absl::OkStatus();
}

// A launch of `config` with its cluster attribute; `cluster` must outlive
// the returned config.
CUlaunchConfig ClusterLaunch(const LaunchConfig& config,
                             CUlaunchAttribute& cluster) {
  cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = config.cluster_x;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig lc{};
  lc.gridDimX = config.grid.x, lc.gridDimY = config.grid.y;
  lc.gridDimZ = config.grid.z;
  lc.blockDimX = config.block.x, lc.blockDimY = config.block.y;
  lc.blockDimZ = config.block.z;
  lc.sharedMemBytes = config.dynamic_smem_bytes;
  lc.hStream = config.stream;
  lc.attrs = &cluster;
  lc.numAttrs = 1;
  return lc;
}

}  // namespace

std::string ArgSpecName(const ArgSpec& spec) {
  switch (spec.kind) {
    case ArgKind::kPointer:
      return spec.size == 8 ? "ptr"
                            : absl::StrCat("ptr(", spec.size, " bytes)");
    case ArgKind::kInt:
    case ArgKind::kFloat:
      return absl::StrCat(KindName(spec.kind), spec.size * 8);
    case ArgKind::kBytes:
      return absl::StrCat("bytes[", spec.size, "]");
  }
  return "?";
}

CUfunction LoadedKernel::function() const {
  return module_ ? module_->function : nullptr;
}
CUcontext LoadedKernel::context() const {
  return module_ ? module_->context : nullptr;
}
const std::string& LoadedKernel::entry() const {
  static const std::string* const kNone = new std::string;
  return module_ ? module_->entry : *kNone;
}
int LoadedKernel::max_threads_per_block() const {
  return module_ ? module_->max_threads_per_block : 0;
}
int LoadedKernel::max_dynamic_smem_bytes() const {
  return module_ ? module_->max_dynamic_smem_bytes : 0;
}

absl::Status LoadedKernel::Launch(const LaunchConfig& config,
                                  const KernelArgs& args) const {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("launch of an unloaded LoadedKernel");
  }
  const LoadedModule& module = *module_;
  if (args.size() != signature_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", module.entry, "' takes ", signature_.size(),
                     " arguments, given ", args.size()));
  }
  for (size_t i = 0; i < signature_.size(); ++i) {
    if (!(args.spec(i) == signature_[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", module.entry, "' argument ", i, ": expected ",
          ArgSpecName(signature_[i]), ", given ", ArgSpecName(args.spec(i))));
    }
  }
  const Dim3& g = config.grid;
  const Dim3& b = config.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", module.entry, "': empty launch, grid (", g.x, ",", g.y, ",",
        g.z, ") block (", b.x, ",", b.y, ",", b.z, ")"));
  }
  const uint64_t threads = uint64_t{b.x} * b.y * b.z;
  if (threads > static_cast<uint64_t>(module.max_threads_per_block)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", module.entry, "': a block of ", threads,
                     " threads (", b.x, "x", b.y, "x", b.z,
                     ") is over its limit of ", module.max_threads_per_block));
  }
  if (static_cast<int64_t>(config.dynamic_smem_bytes) >
      module.dynamic_smem_limit.load(std::memory_order_relaxed)) {
    if (absl::Status s = RaiseDynamicSmem(module, config.dynamic_smem_bytes);
        !s.ok()) {
      return s;
    }
  }
  absl::InlinedVector<void*, 12> params(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    params[i] = const_cast<void*>(args.value(i));
  }
  const DriverApi& cu = *module.api;
  if (config.cluster_x > 1 &&
      (g.x % config.cluster_x != 0 || cu.cuLaunchKernelEx == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", module.entry, "': clusters of ", config.cluster_x,
        " blocks need ",
        cu.cuLaunchKernelEx == nullptr
            ? "a CUDA 12 driver (cuLaunchKernelEx)"
            : absl::StrCat("a grid of a multiple of them, not ", g.x)));
  }
  auto launch = [&]() -> absl::Status {
    if (config.cluster_x <= 1) {
      return TESSEL_CU_CALL(
          cu, cuLaunchKernel(module.function, g.x, g.y, g.z, b.x, b.y, b.z,
                             config.dynamic_smem_bytes, config.stream,
                             params.data(), nullptr));
    }
    CUlaunchAttribute cluster;
    CUlaunchConfig lc = ClusterLaunch(config, cluster);
    return TESSEL_CU_CALL(
        cu, cuLaunchKernelEx(&lc, module.function, params.data(), nullptr));
  };
  CUcontext current = nullptr;
  if (cu.cuCtxGetCurrent(&current) != CUDA_SUCCESS ||
      current != module.context) {
    ScopedContext scoped(cu, module.context);
    if (!scoped.status().ok()) return scoped.status();
    return launch();
  }
  return launch();
}

absl::StatusOr<int> LoadedKernel::MaxActiveClusters(
    const LaunchConfig& config) const {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("an unloaded LoadedKernel");
  }
  const LoadedModule& module = *module_;
  const DriverApi& cu = *module.api;
  if (cu.cuOccupancyMaxActiveClusters == nullptr) {
    return absl::UnavailableError(
        "the CUDA driver has no cuOccupancyMaxActiveClusters (clusters need "
        "a CUDA 12 driver)");
  }
  const Dim3& b = config.block;
  const uint64_t key = (uint64_t{config.cluster_x} << 52) ^
                       (uint64_t{b.x * b.y * b.z} << 32) ^
                       config.dynamic_smem_bytes ^ (uint64_t{1} << 63);
  auto& mutable_module = const_cast<LoadedModule&>(module);
  {
    absl::MutexLock lock(&mutable_module.clusters_mu);
    if (mutable_module.clusters_key == key) return mutable_module.clusters;
  }
  if (static_cast<int64_t>(config.dynamic_smem_bytes) >
      module.dynamic_smem_limit.load(std::memory_order_relaxed)) {
    if (absl::Status s = RaiseDynamicSmem(module, config.dynamic_smem_bytes);
        !s.ok()) {
      return s;
    }
  }
  CUlaunchAttribute cluster;
  CUlaunchConfig lc = ClusterLaunch(config, cluster);
  ScopedContext scoped(cu, module.context);
  if (!scoped.status().ok()) return scoped.status();
  int clusters = 0;
  if (absl::Status s = TESSEL_CU_CALL(
          cu, cuOccupancyMaxActiveClusters(&clusters, module.function, &lc));
      !s.ok()) {
    return s;
  }
  absl::MutexLock lock(&mutable_module.clusters_mu);
  mutable_module.clusters = clusters;
  mutable_module.clusters_key = key;
  return clusters;
}

namespace internal {
absl::StatusOr<std::shared_ptr<LoadedModule>> LoadModule(const Cubin& cubin,
                                                         CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  const DriverApi& cu = **api;
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  ScopedContext current(cu, *ctx);
  if (!current.status().ok()) return current.status();

  absl::StatusOr<uint64_t> context_id = ContextId(cu, *ctx);
  if (!context_id.ok()) return context_id.status();
  auto module = std::make_shared<LoadedModule>();
  module->api = &cu;
  module->context = *ctx;
  module->context_id = *context_id;
  module->entry = cubin.lowered_entry;
  module->cubin_param_count = CubinParamCount(cubin.image, cubin.lowered_entry);
  Count(Counter::kModuleLoads);
  if (absl::Status s = TESSEL_CU_CALL(
          cu, cuModuleLoadData(&module->module, cubin.image.data()));
      !s.ok()) {
    module->module = nullptr;
    return absl::Status(s.code(),
                        absl::StrCat("loading the ", cubin.arch, " cubin of '",
                                     cubin.lowered_entry, "': ", s.message()));
  }
  if (absl::Status s = TESSEL_CU_CALL(
          cu, cuModuleGetFunction(&module->function, module->module,
                                  cubin.lowered_entry.c_str()));
      !s.ok()) {
    return s;
  }
  CUdevice device;
  if (absl::Status s = TESSEL_CU_CALL(cu, cuCtxGetDevice(&device)); !s.ok()) {
    return s;
  }
  int optin = 0, dynamic_limit = 0;
  for (absl::Status s : {
           TESSEL_CU_CALL(
               cu, cuDeviceGetAttribute(
                       &optin,
                       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                       device)),
           TESSEL_CU_CALL(
               cu, cuFuncGetAttribute(&module->max_threads_per_block,
                                      CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                      module->function)),
           TESSEL_CU_CALL(
               cu, cuFuncGetAttribute(&module->static_smem_bytes,
                                      CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                      module->function)),
           TESSEL_CU_CALL(cu,
                          cuFuncGetAttribute(
                              &dynamic_limit,
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              module->function)),
       }) {
    if (!s.ok()) return s;
  }
  module->max_dynamic_smem_bytes =
      std::max(0, optin - module->static_smem_bytes);
  module->dynamic_smem_limit.store(dynamic_limit);
  return module;
}
}  // namespace internal

absl::StatusOr<LoadedKernel> LoadKernelFromModule(
    std::shared_ptr<internal::LoadedModule> module, KernelSignature signature) {
  const DriverApi& cu = *module->api;
  // The driver knows the parameters' sizes: hold the signature to them. No
  // index past the last parameter is asked (a failing call, which
  // compute-sanitizer reports): the count comes from cuFuncGetParamCount
  // where the driver has it, else from the cubin, else from the signature
  // (then a kernel with more parameters than declared goes unnoticed; one
  // with fewer fails the call at its first missing index, reported).
  size_t count = module->cubin_param_count.value_or(signature.size());
  if (size_t driver_count = 0;
      cu.cuFuncGetParamCount != nullptr &&
      cu.cuFuncGetParamCount(module->function, &driver_count) == CUDA_SUCCESS) {
    count = driver_count;
  }
  if (count != signature.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", module->entry, "' takes ", count,
                     " parameters; its signature declares ", signature.size()));
  }
  for (size_t i = 0; cu.cuFuncGetParamInfo != nullptr && i < count; ++i) {
    size_t offset = 0, size = 0;
    const CUresult result =
        cu.cuFuncGetParamInfo(module->function, i, &offset, &size);
    if (result == CUDA_ERROR_INVALID_VALUE) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", module->entry, "' takes ", i,
          " parameters; its signature declares ", signature.size()));
    }
    if (result != CUDA_SUCCESS) break;  // unknown: skip the check
    if (size != signature[i].size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", module->entry, "' parameter ", i, " is ", size,
          " bytes; its signature declares ", ArgSpecName(signature[i])));
    }
  }
  LoadedKernel kernel;
  kernel.module_ = std::move(module);
  kernel.signature_ = std::move(signature);
  return kernel;
}

absl::StatusOr<LoadedKernel> LoadKernel(const Cubin& cubin,
                                        KernelSignature signature,
                                        CUcontext context) {
  absl::StatusOr<std::shared_ptr<internal::LoadedModule>> module =
      internal::LoadModule(cubin, context);
  if (!module.ok()) return module.status();
  return LoadKernelFromModule(*std::move(module), std::move(signature));
}

}  // namespace tessel::jit
