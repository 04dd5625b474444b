// Strided TensorViews on the GPU. A launch whose views are not all
// row-major runs a variant of the kernel compiled for them, once per
// pattern (which parameters are strided, and whether their innermost stride
// is 1) and kept with the kernel: a strided parameter's strides are kernel
// parameters (i32, like the symbolic sizes), its elements addressed as
// sum(index x stride) in 64 bits. A view whose innermost stride is 1 (a
// slice of columns) keeps vector copies and TMA, the tensor map carrying
// its strides; one whose innermost stride is not 1 (a transposed view), or
// whose rows miss the alignment vector copies need, moves elements one at a
// time, without TMA. The row-major kernel and its
// source are untouched: only strided launches pay for a second compile.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<const KernelImpl> variant,
//                    runtime::VariantForViews(kernel, tensors));
//   if (variant) runtime::BindStrides(*variant, tensors, sizes);
#ifndef TESSEL_SRC_RUNTIME_STRIDED_VIEWS_H_
#define TESSEL_SRC_RUNTIME_STRIDED_VIEWS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "src/runtime/check_tensors.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel::runtime {

struct StridedSpecializations {
  absl::Mutex mu;
  std::map<std::string, std::shared_ptr<const KernelImpl>> by_pattern
      ABSL_GUARDED_BY(mu);
};

// Whether every view is row-major (IsRowMajor).
bool AllRowMajor(const std::vector<TensorView>& tensors);

// One letter per view: 'c' row-major, 'u' strided with a unit innermost
// stride, 's' strided otherwise ("cus").
std::string StridePattern(const std::vector<TensorView>& tensors);

// Compiles `program` for strided views of the given pattern (what
// StridedVariant caches; tests ask for it without a GPU).
absl::StatusOr<std::shared_ptr<KernelImpl>> CompileStridedVariant(
    const ir::Program& program, const CompileOptions& options,
    const std::string& pattern);

// The variant of CUDA kernel k for `pattern`, compiled on first use.
absl::StatusOr<std::shared_ptr<const KernelImpl>> StridedVariant(
    const KernelImpl& k, const std::string& pattern);

// The kernel a launch on `tensors` (checked by CheckTensors without the
// alignment needs) runs: null for k itself, when every view is row-major
// and meets k's alignment needs; else the variant for their pattern, where
// a view whose rows or pointer miss an alignment the vector or TMA copies
// of it would need (a symbolic size such as N = 243, an offset pointer)
// moves one element at a time ('s').
absl::StatusOr<std::shared_ptr<const KernelImpl>> VariantForViews(
    const KernelImpl& k, const std::vector<TensorView>& tensors);

// Binds the variant's stride parameters to the views' strides.
void BindStrides(const KernelImpl& variant,
                 const std::vector<TensorView>& tensors, SizeBindings& values);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_STRIDED_VIEWS_H_
