// tessel device prelude: one order for float min and max, element-wise and
// atomic.
//
// IEEE 754-2019 minimumNumber / maximumNumber, as the interpreter's MinNum /
// MaxNum (src/interp/numeric.h): a NaN operand is ignored (NaN only when
// both are), -0 < +0, denormals and infinities order as numbers, and the
// result does not depend on the operands' order.
//
//   float m = tessel::dev::max_num(m, x);
//   tessel::dev::atomic_min(&out[i], v);  // global or shared f32
//
// Tests compile this file for the host with stand-ins for the intrinsics it
// calls (tests/codegen/float_minmax_test.cc): it includes nothing.
#pragma once

namespace tessel {
namespace dev {

// On the device these are the hardware's max.f32 / min.f32 (fmaxf, fminf):
// the PTX ISA defines them as exactly this order (a NaN operand is ignored,
// +0.0 > -0.0), one instruction in the dependent chains of reductions. The
// host build, for tests, spells the order out: a == b holds for equal
// numbers and for zeros of either sign, and then the bitwise AND is +0
// unless both are -0 (max), the OR -0 unless both are +0 (min); otherwise
// NaN compares false both ways (host libms return NaN for a signaling one).
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float max_num(float a, float b) {
  return fmaxf(a, b);
}
__device__ __forceinline__ float min_num(float a, float b) {
  return fminf(a, b);
}
__device__ __forceinline__ double max_num(double a, double b) {
  return fmax(a, b);
}
__device__ __forceinline__ double min_num(double a, double b) {
  return fmin(a, b);
}
#else
__device__ __forceinline__ float max_num(float a, float b) {
  if (a == b) return __int_as_float(__float_as_int(a) & __float_as_int(b));
  return a > b || b != b ? a : b;
}
__device__ __forceinline__ float min_num(float a, float b) {
  if (a == b) return __int_as_float(__float_as_int(a) | __float_as_int(b));
  return a < b || b != b ? a : b;
}
__device__ __forceinline__ double max_num(double a, double b) {
  if (a == b) {
    return __longlong_as_double(__double_as_longlong(a) &
                                __double_as_longlong(b));
  }
  return a > b || b != b ? a : b;
}
__device__ __forceinline__ double min_num(double a, double b) {
  if (a == b) {
    return __longlong_as_double(__double_as_longlong(a) |
                                __double_as_longlong(b));
  }
  return a < b || b != b ? a : b;
}
#endif
// Redoes an update as a compare-and-swap loop, from `seen` (a guess of the
// stored value).
template <bool kMax>
__device__ __forceinline__ void atomic_minmax_cas(float* addr, float seen,
                                                  float v) {
  unsigned int* word = reinterpret_cast<unsigned int*>(addr);
  unsigned int cur = __float_as_uint(seen);
  for (;;) {
    const float now = __uint_as_float(cur);
    const unsigned int want =
        __float_as_uint(kMax ? max_num(now, v) : min_num(now, v));
    if (want == cur) return;
    const unsigned int prev = atomicCAS(word, cur, want);
    if (prev == cur) return;
    cur = prev;
  }
}

// One integer atomic when neither side is NaN. Floats with the sign bit
// clear order like their bits as signed ints, floats with it set like their
// bits as unsigned ints reversed, and every float of the first kind is
// above every float of the second as ints of either kind. So the atomic is
// chosen by v's sign bit, not by v >= 0 (true for -0, whose bits are
// INT_MIN). A NaN v changes nothing. A stored NaN sits outside the integer
// orders and may survive the integer atomic: the update is redone then.
__device__ __forceinline__ void atomic_max(float* addr, float v) {
  if (v != v) return;
  const int bits = __float_as_int(v);
  const float old =
      bits >= 0
          ? __int_as_float(atomicMax(reinterpret_cast<int*>(addr), bits))
          : __uint_as_float(atomicMin(reinterpret_cast<unsigned int*>(addr),
                                      __float_as_uint(v)));
  if (old != old) atomic_minmax_cas<true>(addr, old, v);
}
__device__ __forceinline__ void atomic_min(float* addr, float v) {
  if (v != v) return;
  const int bits = __float_as_int(v);
  const float old =
      bits >= 0
          ? __int_as_float(atomicMin(reinterpret_cast<int*>(addr), bits))
          : __uint_as_float(atomicMax(reinterpret_cast<unsigned int*>(addr),
                                      __float_as_uint(v)));
  if (old != old) atomic_minmax_cas<false>(addr, old, v);
}

}  // namespace dev
}  // namespace tessel
