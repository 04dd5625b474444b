// The TMA descriptors a kernel takes (passes::TensorMapParam), encoded at
// launch for the tensors it is given: shape and strides from the tensor,
// box and swizzle from the kernel, cached per (pointer, shape) by
// jit::TensorMapCache so that a repeated launch costs a lookup.
#ifndef TESSEL_SRC_RUNTIME_TENSOR_MAPS_H_
#define TESSEL_SRC_RUNTIME_TENSOR_MAPS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "jit/launch.h"
#include "jit/tensor_map.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel::runtime {

// The spec of map `m` for tensor t (checked by CheckTensors): row-major, or
// a strided view whose innermost stride is 1.
absl::StatusOr<jit::TensorMapSpec> TensorMapSpecFor(
    const passes::TensorMapParam& m, const TensorView& t);

// Appends every map of kernel k, in order, to args.
absl::Status AddTensorMaps(const KernelImpl& k,
                           const std::vector<TensorView>& tensors,
                           jit::KernelArgs& args);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_TENSOR_MAPS_H_
