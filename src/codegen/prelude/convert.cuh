// tessel device prelude: conversions between f32 and packed 16-bit pairs.
//
// mma fragments and 4-byte stores move b16 values in pairs inside a u32;
// these pack two f32 (round to nearest even) and unpack them again. The low
// half holds the first (lower-address) element.
//
//   u32 packed = tessel::dev::pack_f16x2(acc[0], acc[1]);
//   *reinterpret_cast<u32*>(&C[off]) = packed;
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

__device__ __forceinline__ u32 pack_f16x2(float lo, float hi) {
  u32 r;
  // cvt packs its first source operand into the upper half.
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Two 16-bit values as one u32 register (lo in the low half): the pairs of
// a register-resident mma A operand.
__device__ __forceinline__ u32 pack_b16x2(f16 lo, f16 hi) {
  return bit_cast<u32>(__halves2half2(lo, hi));
}
__device__ __forceinline__ u32 pack_b16x2(bf16 lo, bf16 hi) {
  return bit_cast<u32>(__halves2bfloat162(lo, hi));
}

__device__ __forceinline__ float2 unpack_f16x2(u32 v) {
  return __half22float2(bit_cast<f16x2>(v));
}

__device__ __forceinline__ float2 unpack_bf16x2(u32 v) {
  return __bfloat1622float2(bit_cast<bf16x2>(v));
}

// Scalar conversions under one name, so generated code writes
// convert<To>(x) whatever the pair of types is.
template <typename To>
__device__ __forceinline__ To convert(float x);
template <>
__device__ __forceinline__ float convert<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ f16 convert<f16>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ bf16 convert<bf16>(float x) {
  return __float2bfloat16_rn(x);
}

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(f16 x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(bf16 x) { return __bfloat162float(x); }

// n consecutive elements between registers and memory in words of up to
// 16 bytes, converted element-wise (f32 / f16 / bf16): the kRows tiles'
// copies. The memory side is aligned to its word.
//
//   float x[8];
//   tessel::dev::load_vec<8>(&x[0], &X[off]);   // one 16-byte f16 load
template <int kBytes>
struct VecWord;
template <>
struct VecWord<16> {
  using type = uint4;
};
template <>
struct VecWord<8> {
  using type = uint2;
};
template <>
struct VecWord<4> {
  using type = u32;
};
template <>
struct VecWord<2> {
  using type = unsigned short;
};

template <int N, typename D, typename S>
__device__ __forceinline__ void load_vec(D* dst, const S* src) {
  constexpr int kPiece = N * sizeof(S) >= 16 ? 16 / sizeof(S) : N;
  static_assert(N % kPiece == 0, "load_vec: whole words");
  using W = typename VecWord<kPiece * sizeof(S)>::type;
#pragma unroll
  for (int p = 0; p < N; p += kPiece) {
    alignas(16) S s[kPiece];
    *reinterpret_cast<W*>(s) = *reinterpret_cast<const W*>(src + p);
#pragma unroll
    for (int i = 0; i < kPiece; ++i) dst[p + i] = convert<D>(to_f32(s[i]));
  }
}

template <int N, typename D, typename S>
__device__ __forceinline__ void store_vec(D* dst, const S* src) {
  constexpr int kPiece = N * sizeof(D) >= 16 ? 16 / sizeof(D) : N;
  static_assert(N % kPiece == 0, "store_vec: whole words");
  using W = typename VecWord<kPiece * sizeof(D)>::type;
#pragma unroll
  for (int p = 0; p < N; p += kPiece) {
    alignas(16) D d[kPiece];
#pragma unroll
    for (int i = 0; i < kPiece; ++i) d[i] = convert<D>(to_f32(src[p + i]));
    *reinterpret_cast<W*>(dst + p) = *reinterpret_cast<const W*>(d);
  }
}

}  // namespace dev
}  // namespace tessel
