#include "src/runtime/aot_plan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/runtime/kernel_impl.h"
#include "src/runtime/lower.h"
#include "src/runtime/tensor_maps.h"

namespace tessel::runtime {
namespace {

// `e` as C++ over tessel_d0, tessel_d1, ... (the indices of `dims`), with the
// runtime's floor-division helpers (tessel/aot_runtime.h), as
// check_tensors.cc's EvalInt evaluates it.
absl::StatusOr<std::string> Cpp(const ir::Expr& e,
                                const std::vector<ir::Var>& dims) {
  if (std::optional<int64_t> c = ir::AsConstInt(e)) {
    return absl::StrCat("int64_t{", *c, "}");
  }
  if (const auto* v = e.As<ir::VarNode>()) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i].get() == v) return absl::StrCat("tessel_d", i);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("size ", v->name, " is not one of the program's sizes"));
  }
  if (const auto* c = e.As<ir::CastNode>()) return Cpp(c->value, dims);
  if (const auto* b = e.As<ir::BinaryNode>()) {
    absl::StatusOr<std::string> x = Cpp(b->a, dims), y = Cpp(b->b, dims);
    if (!x.ok()) return x;
    if (!y.ok()) return y;
    auto call = [&](const char* f) {
      return absl::StrCat("tessel::aot::", f, "(", *x, ", ", *y, ")");
    };
    switch (b->op) {
      case ir::BinaryOp::kAdd:
        return absl::StrCat("(", *x, " + ", *y, ")");
      case ir::BinaryOp::kSub:
        return absl::StrCat("(", *x, " - ", *y, ")");
      case ir::BinaryOp::kMul:
        return absl::StrCat("(", *x, " * ", *y, ")");
      case ir::BinaryOp::kDiv:
        return call("FloorDiv");
      case ir::BinaryOp::kMod:
        return call("FloorMod");
      case ir::BinaryOp::kCeilDiv:
        return call("CeilDiv");
      case ir::BinaryOp::kMin:
        return call("Min");
      case ir::BinaryOp::kMax:
        return call("Max");
      default:
        break;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot spell ", ir::ToString(e), " in an ahead-of-time launch"));
}

std::string Expected(const ir::Buffer& b) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : b->shape) dims.push_back(ir::ToString(d));
  return absl::StrCat(std::string(dtype_name(b->dtype)), "[",
                      absl::StrJoin(dims, ","), "]");
}

}  // namespace

absl::StatusOr<AotKernelPlan> PlanAot(const Program& program,
                                      const CompileOptions& options) {
  if (options.target.kind() == Target::Kind::kCpu) {
    return absl::InvalidArgumentError(
        "ahead-of-time kernels are CUDA kernels: the CPU target has none");
  }
  absl::StatusOr<std::shared_ptr<KernelImpl>> compiled =
      CompileCuda(program.ir(), options);
  if (!compiled.ok()) return compiled.status();
  const KernelImpl& k = **compiled;
  const std::vector<ir::Var>& dims = k.dims;
  AotKernelPlan plan;
  plan.name = k.name;
  plan.arch = k.arch;
  plan.cubin = k.cubin.cubin->image;
  plan.entry = k.cubin.cubin->lowered_entry;
  for (const ir::Var& d : dims) plan.sizes.push_back(d->name);
  for (const ir::Buffer& b : k.params) {
    AotParam p{.name = b->name, .dtype = b->dtype, .expected = Expected(b)};
    for (const ir::Expr& want : b->shape) {
      AotDim dim;
      if (std::optional<int64_t> c = ir::AsConstInt(want)) {
        dim.value = *c;
      } else if (const auto* v = want.As<ir::VarNode>()) {
        dim.kind = AotDim::Kind::kSize;
        dim.size = -1;
        for (size_t i = 0; i < dims.size(); ++i)
          if (dims[i].get() == v) dim.size = static_cast<int>(i);
        if (dim.size < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "size ", v->name, " is not one of the program's sizes"));
        }
      } else {
        absl::StatusOr<std::string> cpp = Cpp(want, dims);
        if (!cpp.ok()) return cpp.status();
        dim.kind = AotDim::Kind::kExpression;
        dim.cpp = *cpp;
        dim.text = ir::ToString(want);
      }
      p.shape.push_back(std::move(dim));
    }
    plan.params.push_back(std::move(p));
  }
  for (size_t d = 0; d < 3; ++d) {
    if (d >= k.grid.size()) {
      plan.grid.push_back("int64_t{1}");
      continue;
    }
    absl::StatusOr<std::string> extent = Cpp(k.grid[d], dims);
    if (!extent.ok()) return extent.status();
    plan.grid.push_back(*extent);
  }
  plan.threads = k.threads;
  plan.dynamic_smem_bytes = k.dynamic_smem_bytes;
  plan.persistent = k.persistent;
  plan.cluster_size = k.cluster_size;
  for (const passes::TensorMapParam& m : k.tensor_maps) {
    // The element type as the launcher maps it (any shape of the rank).
    const ir::Buffer& b = k.params[m.param];
    TensorView probe{0, b->dtype, std::vector<int64_t>(b->shape.size(), 1)};
    absl::StatusOr<jit::TensorMapSpec> spec = TensorMapSpecFor(m, probe);
    if (!spec.ok()) return spec.status();
    plan.tensor_maps.push_back({.param = m.param,
                                .box = m.box,
                                .swizzle_bytes = m.swizzle_bytes,
                                .data_type = static_cast<int>(spec->dtype)});
  }
  for (const passes::AlignmentRequirement& a : k.alignment) {
    plan.alignment.push_back(
        {.param = a.param, .multiple = a.multiple, .reason = a.reason});
  }
  plan.kernel_params = k.signature.size();
  if (plan.kernel_params !=
      k.params.size() + dims.size() + k.tensor_maps.size()) {
    return absl::InternalError(
        absl::StrCat(plan.name, ": the kernel takes ", plan.kernel_params,
                     " parameters; the launcher passes ",
                     k.params.size() + dims.size() + k.tensor_maps.size()));
  }
  return plan;
}

}  // namespace tessel::runtime
