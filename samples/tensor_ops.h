// Element-wise helper kernels of the samples' host wrappers: zeroing the f32
// tensors that kernels add into with atomics, and converting them to f16 /
// bf16 afterwards (as the seed's tl_fused_chunk_bwd does with
// torch.zeros_like(..., dtype=float32) and .to(torch.float16)).
//
//   absl::StatusOr<tessel::Program> zero = ZeroProgram(n, tessel::f32);
//   absl::StatusOr<tessel::Program> cast = CastProgram(n, tessel::f32,
//                                                      tessel::f16);
//   // parameters: zero (X[n]); cast (X[n] of `from`, Y[n] of `to`)
//
// Both see a tensor as a flat vector of n elements (samples::Arg's view).
#ifndef TESSEL_SAMPLES_TENSOR_OPS_H_
#define TESSEL_SAMPLES_TENSOR_OPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// Elements of one block of the helper kernels.
inline constexpr int kElementwiseTile = 2048;

// X[i] = 0 for i < n.
absl::StatusOr<Program> ZeroProgram(int64_t n, DataType dtype);

// Y[i] = X[i] rounded to `to`, for i < n.
absl::StatusOr<Program> CastProgram(int64_t n, DataType from, DataType to);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_TENSOR_OPS_H_
