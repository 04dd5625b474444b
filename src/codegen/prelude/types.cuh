// tessel device prelude: basic types and address helpers.
//
// Every generated kernel includes "tessel_prelude.cuh", which includes this
// file first. The prelude is handed to NVRTC by content, so it may include
// only the CUDA toolkit headers NVRTC can see (cuda_fp16.h, cuda_bf16.h;
// tessel_prelude.cuh adds cuda_fp8.h) and must not rely on libc++ or CCCL.
//
//   __shared__ alignas(128) tessel::dev::u8 smem[1024];
//   tessel::dev::u32 addr = tessel::dev::smem_addr(smem);  // for PTX operands
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace tessel {
namespace dev {

// Fixed-width integers without <cstdint>: NVRTC offers no libc by default.
using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;

static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "unexpected int sizes");

using f16 = __half;
using f16x2 = __half2;
using bf16 = __nv_bfloat16;
using bf16x2 = __nv_bfloat162;

// The 32-bit shared-memory address PTX instructions (cp.async, ldmatrix,
// mbarrier) take as their [addr] operand.
__device__ __forceinline__ u32 smem_addr(const void* ptr) {
  return static_cast<u32>(__cvta_generic_to_shared(ptr));
}

// Reinterprets the bits of a 32-bit value (a half2 or bf162 pair as the u32
// register mma and ldmatrix operate on, and back).
template <typename To, typename From>
__device__ __forceinline__ To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

// Integer helpers the codegen uses for tile counts and predicates.
__host__ __device__ __forceinline__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
__host__ __device__ __forceinline__ constexpr int round_up(int a, int b) {
  return ceil_div(a, b) * b;
}

}  // namespace dev
}  // namespace tessel
