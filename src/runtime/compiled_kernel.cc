#include <algorithm>
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "jit/context.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "src/ir/limits.h"
#include "src/ir/printer.h"
#include "src/runtime/check_tensors.h"
#include "src/runtime/cpu_kernel.h"
#include "src/runtime/kernel_impl.h"
#include "src/runtime/strided_views.h"
#include "src/runtime/tensor_maps.h"
#include "tessel/runtime.h"

namespace tessel {

const std::string& runtime::LoweredIrText::text() const {
  absl::call_once(once_, [this] {
    text_ = ir::ToString(program_);
    program_ = ir::Program();
  });
  return text_;
}

std::string TensorView::ToString() const {
  return absl::StrCat(std::string(dtype_name(dtype)), "[",
                      absl::StrJoin(shape, ","), "]");
}

namespace {

// Launches CUDA kernel k (row-major, or a strided variant) on checked
// tensors whose sizes (and strides) `values` binds.
absl::Status LaunchCuda(const runtime::KernelImpl& k,
                        const std::vector<TensorView>& tensors,
                        const runtime::SizeBindings& values,
                        CUstream_st* stream) {
  jit::LaunchConfig config;
  uint32_t* g[3] = {&config.grid.x, &config.grid.y, &config.grid.z};
  for (size_t d = 0; d < k.grid.size() && d < 3; ++d) {
    absl::StatusOr<int64_t> n = runtime::EvalInt(k.grid[d], values);
    if (!n.ok()) return n.status();
    if (*n <= 0) return absl::OkStatus();  // nothing to do
    if (*n > ir::kMaxGridDim[d]) {
      // A cast to the launch's uint32 would run a part of the grid.
      return absl::InvalidArgumentError(absl::StrCat(
          k.name, ": grid dimension ", d, " is ", *n,
          " at these sizes; CUDA's grid limit is ", ir::kMaxGridDim[d]));
    }
    *g[d] = static_cast<uint32_t>(*n);
  }
  // The stream's context, else the caller's current one, else device 0's
  // primary: the module is loaded there (once per context) and the SM count
  // is that device's.
  absl::StatusOr<CUcontext> context =
      jit::StreamContext(reinterpret_cast<CUstream>(stream));
  if (!context.ok()) return context.status();
  if (k.persistent) {
    // One block per SM, each looping over the tiles (warp_specialize.h).
    absl::StatusOr<int> sms = jit::MultiprocessorCount(*context);
    if (!sms.ok()) return sms.status();
    if (k.cluster_size == 1)
      config.grid.x = std::min(config.grid.x, static_cast<uint32_t>(*sms));
  }
  config.block.x = static_cast<uint32_t>(k.threads);
  config.dynamic_smem_bytes = static_cast<uint32_t>(k.dynamic_smem_bytes);
  config.stream = reinterpret_cast<CUstream>(stream);
  config.cluster_x = static_cast<uint32_t>(k.cluster_size);
  jit::KernelArgs args;
  for (const TensorView& t : tensors)
    args.AddPointer(static_cast<CUdeviceptr>(t.data));
  for (const ir::Var& d : k.dims) {
    auto it = values.find(d.get());
    int32_t v = it == values.end() ? 0 : static_cast<int32_t>(it->second);
    args.Add(v);
  }
  if (absl::Status s = runtime::AddTensorMaps(k, tensors, args); !s.ok())
    return s;
  absl::StatusOr<jit::LoadedKernel> loaded =
      jit::KernelCache::Default().Load(k.cubin, k.signature, *context);
  if (!loaded.ok()) {
    absl::StatusOr<std::string> device_arch = jit::DetectArch(*context);
    if (device_arch.ok() && *device_arch != k.arch) {
      return absl::Status(
          loaded.status().code(),
          absl::StrCat(k.name, ": compiled for ", k.arch,
                       ", launched in a context of an ", *device_arch,
                       " device (compile with Target::detect() while that "
                       "context is current): ",
                       loaded.status().message()));
    }
    return loaded.status();
  }
  if (k.persistent && k.cluster_size > 1) {
    // As many clusters as run at once (a second wave of a few would double
    // the time), each looping over its pairs of tiles.
    absl::StatusOr<int> clusters = loaded->MaxActiveClusters(config);
    if (!clusters.ok()) return clusters.status();
    const uint32_t most =
        static_cast<uint32_t>(std::max(*clusters, 1) * k.cluster_size);
    config.grid.x = std::min(config.grid.x, most);
  }
  return loaded->Launch(config, args);
}

}  // namespace

absl::Status CompiledKernel::launch(const std::vector<TensorView>& tensors,
                                    CUstream_st* stream) const {
  if (!impl_) {
    return absl::FailedPreconditionError(
        "launch: empty kernel (default-constructed or moved-from; assign it "
        "the result of tessel::compile())");
  }
  const runtime::KernelImpl& k = *impl_;
  if (k.interpreter) return runtime::LaunchOnCpu(k, tensors, stream);
  absl::StatusOr<runtime::SizeBindings> sizes =
      runtime::CheckTensors(k, tensors, /*alignment=*/false);
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> variant =
      runtime::VariantForViews(k, tensors);
  if (!variant.ok()) return variant.status();
  if (*variant == nullptr) return LaunchCuda(k, tensors, *sizes, stream);
  const runtime::KernelImpl& run = **variant;
  sizes = runtime::CheckTensors(run, tensors);  // its alignment needs
  if (!sizes.ok()) return sizes.status();
  runtime::BindStrides(run, tensors, *sizes);
  return LaunchCuda(run, tensors, *sizes, stream);
}

// A default-constructed or moved-from kernel has no impl_: its accessors give
// empty values (launch() says why it cannot run), never a crash.
namespace {
const std::string& Empty() {
  static const auto* empty = new std::string();
  return *empty;
}
}  // namespace

const std::string& CompiledKernel::name() const {
  return impl_ ? impl_->name : Empty();
}
const std::string& CompiledKernel::source() const {
  if (impl_ && impl_->relowering) return impl_->relowering->source();
  return impl_ ? impl_->source : Empty();
}
const std::string& CompiledKernel::entry() const {
  return impl_ ? impl_->entry : Empty();
}
const std::string& CompiledKernel::lowered_ir() const {
  if (impl_ && impl_->relowering) return impl_->relowering->lowered_ir();
  return impl_ && impl_->lowered_ir ? impl_->lowered_ir->text() : Empty();
}
const std::vector<std::string>& CompiledKernel::schedule() const {
  static const auto* none = new std::vector<std::string>();
  return impl_ ? impl_->schedule : *none;
}
const std::string& CompiledKernel::arch() const {
  return impl_ ? impl_->arch : Empty();
}
int CompiledKernel::threads() const { return impl_ ? impl_->threads : 0; }
int CompiledKernel::shared_memory_bytes() const {
  return impl_ ? static_cast<int>(impl_->dynamic_smem_bytes) : 0;
}
size_t CompiledKernel::cubin_bytes() const {
  return impl_ && impl_->cubin.cubin ? impl_->cubin.cubin->image.size() : 0;
}
const char* CompiledKernel::cache_origin() const {
  if (!impl_ || impl_->interpreter != nullptr) return "none";
  return jit::CubinOriginName(impl_->cubin.origin);
}

}  // namespace tessel
