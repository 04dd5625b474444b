// tessel device prelude: T::min / T::max for every element type.
//
// The codegen writes tl::min(x, y) / tl::max(x, y) for float operands:
// CUDA's own min / max have no f16 / bf16 overloads of their own, and the
// conversions of __half / __nv_bfloat16 make a plain max(x, y) ambiguous.
// Floats follow float_minmax.cuh's order (NaN ignored, -0 < +0); f16 and
// bf16 compare as f32, which is exact, and return one operand unchanged.
// fp8 operands reach these as f32 (the codegen computes fp8 in f32).
//
//   tl::f16 m = tl::max(m, x);
#pragma once

#include "float_minmax.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

// Integers (the reductions call these for every type).
template <typename T>
__device__ __forceinline__ T max(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
__device__ __forceinline__ T min(T a, T b) {
  return b < a ? b : a;
}

__device__ __forceinline__ float max(float a, float b) { return max_num(a, b); }
__device__ __forceinline__ float min(float a, float b) { return min_num(a, b); }
__device__ __forceinline__ double max(double a, double b) {
  return max_num(a, b);
}
__device__ __forceinline__ double min(double a, double b) {
  return min_num(a, b);
}

// The operand max_num / min_num returns, so no rounding back is needed.
__device__ __forceinline__ f16 max(f16 a, f16 b) {
  const float fa = __half2float(a), fb = __half2float(b);
  return __float_as_uint(max_num(fa, fb)) == __float_as_uint(fa) ? a : b;
}
__device__ __forceinline__ f16 min(f16 a, f16 b) {
  const float fa = __half2float(a), fb = __half2float(b);
  return __float_as_uint(min_num(fa, fb)) == __float_as_uint(fa) ? a : b;
}
__device__ __forceinline__ bf16 max(bf16 a, bf16 b) {
  const float fa = __bfloat162float(a), fb = __bfloat162float(b);
  return __float_as_uint(max_num(fa, fb)) == __float_as_uint(fa) ? a : b;
}
__device__ __forceinline__ bf16 min(bf16 a, bf16 b) {
  const float fa = __bfloat162float(a), fb = __bfloat162float(b);
  return __float_as_uint(min_num(fa, fb)) == __float_as_uint(fa) ? a : b;
}

}  // namespace dev
}  // namespace tessel
