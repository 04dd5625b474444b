// The checks launch() makes on the caller's TensorViews before running a
// kernel, the same for the GPU and the CPU target: count, dtype, rank,
// shape (binding the program's symbolic sizes), strides (positive, not
// overlapping), a non-null pointer and the kernel's alignment needs.
//
//   absl::StatusOr<runtime::SizeBindings> sizes =
//       runtime::CheckTensors(impl, tensors);
//   if (!sizes.ok()) return sizes.status();
//   absl::StatusOr<int64_t> gx = runtime::EvalInt(impl.grid[0], *sizes);
#ifndef TESSEL_SRC_RUNTIME_CHECK_TENSORS_H_
#define TESSEL_SRC_RUNTIME_CHECK_TENSORS_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "src/ir/expr.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel::runtime {

// The value of each symbolic size, bound from the tensors' shapes.
using SizeBindings = std::unordered_map<const ir::VarNode*, int64_t>;

// InvalidArgument naming the kernel and the parameter
// ("gemm: A: expected f16[M,K], got f32[64,32]") on the first mismatch.
// `alignment`: also the kernel's alignment needs (false while
// VariantForViews, strided_views.h, has yet to pick the kernel that runs).
absl::StatusOr<SizeBindings> CheckTensors(
    const KernelImpl& k, const std::vector<TensorView>& tensors,
    bool alignment = true);

// Whether view t meets requirement a (its rows and pointer aligned for the
// kernel's vector or TMA copies of it).
bool MeetsAlignment(const passes::AlignmentRequirement& a, const TensorView& t);

// Whether the view is row-major contiguous: no strides, or the row-major
// ones (a dimension of extent 1 may have any).
bool IsRowMajor(const TensorView& t);

// Evaluates an integer expression of the program's sizes (grid extents).
absl::StatusOr<int64_t> EvalInt(const ir::Expr& e, const SizeBindings& values);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_CHECK_TENSORS_H_
