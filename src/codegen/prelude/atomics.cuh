// tessel device prelude: atomic adds of scalars and short vectors, and
// atomic max / min.
//
// The codegen lowers a region atomic_add to the widest form the element
// type, alignment, address space and target allow. sm_90 has vector float2 /
// float4 atomic adds on global memory only: the *_f32x2 / *_f32x4 forms take
// global addresses and fall back to scalar atomics before sm_90 (each element
// is still added atomically, just not the vector as one). For shared memory
// the codegen emits the scalar forms.
//
//   tessel::dev::atomic_add_f32x4(&dQ[off], make_float4(a, b, c, d));  // off %
//   4 == 0 tessel::dev::atomic_add_f16x2(&out[off], __floats2half2_rn(x, y));
#pragma once

#include "float_minmax.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

__device__ __forceinline__ void atomic_add_f32(float* addr, float v) {
  atomicAdd(addr, v);
}

// addr: global memory, 8-byte aligned.
__device__ __forceinline__ void atomic_add_f32x2(float* addr, float2 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(addr), v);
#else
  atomicAdd(addr, v.x);
  atomicAdd(addr + 1, v.y);
#endif
}

// addr: global memory, 16-byte aligned.
__device__ __forceinline__ void atomic_add_f32x4(float* addr, float4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(addr), v);
#else
  atomicAdd(addr, v.x);
  atomicAdd(addr + 1, v.y);
  atomicAdd(addr + 2, v.z);
  atomicAdd(addr + 3, v.w);
#endif
}

__device__ __forceinline__ void atomic_add_f16(f16* addr, f16 v) {
  atomicAdd(addr, v);
}

// addr must be 4-byte aligned.
__device__ __forceinline__ void atomic_add_f16x2(f16* addr, f16x2 v) {
  atomicAdd(reinterpret_cast<f16x2*>(addr), v);
}

__device__ __forceinline__ void atomic_add_bf16(bf16* addr, bf16 v) {
  atomicAdd(addr, v);
}

// addr must be 4-byte aligned.
__device__ __forceinline__ void atomic_add_bf16x2(bf16* addr, bf16x2 v) {
  atomicAdd(reinterpret_cast<bf16x2*>(addr), v);
}

// Element-typed front end, so the codegen can emit atomic_add(ptr, value)
// for any scalar type it supports.
__device__ __forceinline__ void atomic_add(float* addr, float v) {
  atomic_add_f32(addr, v);
}
__device__ __forceinline__ void atomic_add(f16* addr, f16 v) {
  atomic_add_f16(addr, v);
}
__device__ __forceinline__ void atomic_add(bf16* addr, bf16 v) {
  atomic_add_bf16(addr, v);
}
__device__ __forceinline__ void atomic_add(int* addr, int v) {
  atomicAdd(addr, v);
}
__device__ __forceinline__ void atomic_add(u32* addr, u32 v) {
  atomicAdd(addr, v);
}
// CUDA adds 64-bit integers as unsigned only; two's complement wraps alike.
__device__ __forceinline__ void atomic_add(i64* addr, i64 v) {
  atomicAdd(reinterpret_cast<u64*>(addr), static_cast<u64>(v));
}
__device__ __forceinline__ void atomic_add(double* addr, double v) {
  atomicAdd(addr, v);
}

// Integer max / min; the f32 ones are in float_minmax.cuh.
__device__ __forceinline__ void atomic_max(int* addr, int v) {
  atomicMax(addr, v);
}
__device__ __forceinline__ void atomic_min(int* addr, int v) {
  atomicMin(addr, v);
}
__device__ __forceinline__ void atomic_max(u32* addr, u32 v) {
  atomicMax(addr, v);
}
__device__ __forceinline__ void atomic_min(u32* addr, u32 v) {
  atomicMin(addr, v);
}
__device__ __forceinline__ void atomic_max(i64* addr, i64 v) {
  atomicMax(addr, v);
}
__device__ __forceinline__ void atomic_min(i64* addr, i64 v) {
  atomicMin(addr, v);
}

// A ticket (T::atomic_ticket), taken by one thread after a barrier:
// *counter += v in global memory, its old value into *slot (shared). The
// add is an acquire-release at GPU scope: the writes this thread observed
// (the whole block's, through the barrier before) are visible to the thread
// that draws a later ticket, and the writes of earlier ticket holders are
// visible to this block after the barrier that follows.
__device__ __forceinline__ void atomic_ticket(int* slot, int* counter, int v) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(counter), "r"(v)
               : "memory");
  *slot = old;
}

}  // namespace dev
}  // namespace tessel
