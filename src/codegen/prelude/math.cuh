// tessel device prelude: fast math on f32.
//
// The approximate forms map to single MUFU instructions; their error bounds
// are the PTX ISA's (ex2.approx: 2 ulp over the full range with .ftz).
//
//   float p = tessel::dev::exp2_approx(s * kLog2e - m);
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// e^x as 2^(x * log2 e).
__device__ __forceinline__ float exp_approx(float x) {
  return exp2_approx(x * kLog2e);
}

__device__ __forceinline__ float log2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rsqrt_approx(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float sigmoid_approx(float x) {
  return rcp_approx(1.0f + exp2_approx(-x * kLog2e));
}

// -inf for max reductions that start empty.
__device__ __forceinline__ float neg_inf() {
  return __int_as_float(0xff800000);
}

}  // namespace dev
}  // namespace tessel
