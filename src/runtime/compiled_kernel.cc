#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel {
namespace runtime {

absl::StatusOr<int64_t> EvalInt(
    const ir::Expr& e,
    const std::unordered_map<const ir::VarNode*, int64_t>& values) {
  if (auto c = ir::AsConstInt(e)) return *c;
  if (const auto* v = e.As<ir::VarNode>()) {
    auto it = values.find(v);
    if (it == values.end())
      return absl::InvalidArgumentError(
          absl::StrCat("size ", v->name, " is not bound"));
    return it->second;
  }
  if (const auto* c = e.As<ir::CastNode>()) return EvalInt(c->value, values);
  if (const auto* b = e.As<ir::BinaryNode>()) {
    absl::StatusOr<int64_t> x = EvalInt(b->a, values),
                            y = EvalInt(b->b, values);
    if (!x.ok()) return x;
    if (!y.ok()) return y;
    switch (b->op) {
      case ir::BinaryOp::kAdd:
        return *x + *y;
      case ir::BinaryOp::kSub:
        return *x - *y;
      case ir::BinaryOp::kMul:
        return *x * *y;
      case ir::BinaryOp::kDiv:
        if (*y == 0) break;
        return ir::FloorDiv(*x, *y);
      case ir::BinaryOp::kMod:
        if (*y == 0) break;
        return ir::FloorMod(*x, *y);
      case ir::BinaryOp::kCeilDiv:
        if (*y == 0) break;
        return -ir::FloorDiv(-*x, *y);
      case ir::BinaryOp::kMin:
        return std::min(*x, *y);
      case ir::BinaryOp::kMax:
        return std::max(*x, *y);
      default:
        break;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot evaluate ", ir::ToString(e), " at launch"));
}

}  // namespace runtime

std::string TensorView::ToString() const {
  return absl::StrCat(std::string(dtype_name(dtype)), "[",
                      absl::StrJoin(shape, ","), "]");
}

namespace {

std::string Expected(const ir::Buffer& b) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : b->shape) dims.push_back(ir::ToString(d));
  return absl::StrCat(std::string(dtype_name(b->dtype)), "[",
                      absl::StrJoin(dims, ","), "]");
}

}  // namespace

absl::Status CompiledKernel::launch(const std::vector<TensorView>& tensors,
                                    CUstream_st* stream) const {
  if (!impl_) return absl::FailedPreconditionError("launch: empty kernel");
  const runtime::KernelImpl& k = *impl_;
  if (tensors.size() != k.params.size()) {
    std::vector<std::string> names;
    for (const ir::Buffer& b : k.params) names.push_back(b->name);
    return absl::InvalidArgumentError(
        absl::StrCat(k.name, ": expected ", k.params.size(), " tensors (",
                     absl::StrJoin(names, ", "), "), got ", tensors.size()));
  }
  std::unordered_map<const ir::VarNode*, int64_t> values;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ir::Buffer& p = k.params[i];
    const TensorView& t = tensors[i];
    auto mismatch = [&]() {
      return absl::InvalidArgumentError(absl::StrCat(k.name, ": ", p->name,
                                                     ": expected ", Expected(p),
                                                     ", got ", t.ToString()));
    };
    if (t.dtype != p->dtype || t.shape.size() != p->shape.size())
      return mismatch();
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const ir::Expr& want = p->shape[d];
      if (const auto* v = want.As<ir::VarNode>()) {
        auto [it, fresh] = values.emplace(v, t.shape[d]);
        if (!fresh && it->second != t.shape[d]) {
          return absl::InvalidArgumentError(
              absl::StrCat(k.name, ": ", p->name, ": expected ", Expected(p),
                           ", got ", t.ToString(), " (", v->name, " is ",
                           it->second, " from an earlier tensor)"));
        }
        if (t.shape[d] <= 0 || t.shape[d] > INT32_MAX) return mismatch();
      } else {
        absl::StatusOr<int64_t> n = runtime::EvalInt(want, values);
        if (!n.ok() || *n != t.shape[d]) return mismatch();
      }
    }
    if (!t.strides.empty()) {
      int64_t expect = 1;
      for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
        if (t.strides[d] != expect && t.shape[d] != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              k.name, ": ", p->name, ": the kernel takes contiguous row-major ",
              "tensors; strides [", absl::StrJoin(t.strides, ","),
              "] are not"));
        }
        expect *= t.shape[d];
      }
    }
    if (t.data == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(k.name, ": ", p->name, ": null device pointer"));
    }
  }
  for (const passes::AlignmentRequirement& a : k.alignment) {
    const TensorView& t = tensors[a.param];
    int64_t bytes = int64_t{a.multiple} * dtype_bytes(t.dtype);
    if (t.shape.back() % a.multiple != 0 || t.data % bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          k.name, ": ", k.params[a.param]->name, " ", t.ToString(),
          ": this kernel's ", a.reason, " need the last dimension to be a ",
          "multiple of ", a.multiple, " and the pointer aligned to ", bytes,
          " bytes"));
    }
  }
  jit::LaunchConfig config;
  uint32_t* g[3] = {&config.grid.x, &config.grid.y, &config.grid.z};
  for (size_t d = 0; d < k.grid.size() && d < 3; ++d) {
    absl::StatusOr<int64_t> n = runtime::EvalInt(k.grid[d], values);
    if (!n.ok()) return n.status();
    if (*n <= 0) return absl::OkStatus();  // nothing to do
    *g[d] = static_cast<uint32_t>(*n);
  }
  config.block.x = static_cast<uint32_t>(k.threads);
  config.dynamic_smem_bytes = static_cast<uint32_t>(k.dynamic_smem_bytes);
  config.stream = reinterpret_cast<CUstream>(stream);
  jit::KernelArgs args;
  for (const TensorView& t : tensors)
    args.AddPointer(static_cast<CUdeviceptr>(t.data));
  for (const ir::Var& d : k.dims) {
    auto it = values.find(d.get());
    int32_t v = it == values.end() ? 0 : static_cast<int32_t>(it->second);
    args.Add(v);
  }
  absl::StatusOr<jit::LoadedKernel> loaded =
      jit::KernelCache::Default().Load(k.cubin, k.signature);
  if (!loaded.ok()) return loaded.status();
  return loaded->Launch(config, args);
}

const std::string& CompiledKernel::name() const { return impl_->name; }
const std::string& CompiledKernel::source() const { return impl_->source; }
const std::string& CompiledKernel::entry() const { return impl_->entry; }
const std::string& CompiledKernel::lowered_ir() const {
  return impl_->lowered_ir;
}
const std::string& CompiledKernel::arch() const { return impl_->arch; }
int CompiledKernel::threads() const { return impl_->threads; }
int CompiledKernel::shared_memory_bytes() const {
  return static_cast<int>(impl_->dynamic_smem_bytes);
}
size_t CompiledKernel::cubin_bytes() const {
  return impl_->cubin.cubin ? impl_->cubin.cubin->image.size() : 0;
}

}  // namespace tessel
