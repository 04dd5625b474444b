// tessel device prelude: warp-level tensor-core MMA (mma.sync, sm_80+).
//
// Fragment layout of m16n8k16 (g = lane / 4, t = lane % 4), all u32 registers
// holding two b16 values:
//   a[0]: (row g,     k 2t..2t+1)   a[1]: (row g + 8, k 2t..2t+1)
//   a[2]: (row g,     k 2t+8..+9)   a[3]: (row g + 8, k 2t+8..+9)
//   b[0]: (k 2t..2t+1, col g)       b[1]: (k 2t+8..+9, col g)
//   c[0], c[1]: (row g, col 2t, 2t+1)   c[2], c[3]: (row g + 8, same cols)
//
//   float acc[4] = {};
//   tessel::dev::mma_m16n8k16_f16_f32(acc, a, b);   // acc += A * B
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

// d += a * b with f16 inputs and f32 accumulation.
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&d)[4],
                                                     const u32 (&a)[4],
                                                     const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a * b with bf16 inputs and f32 accumulation.
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float (&d)[4],
                                                      const u32 (&a)[4],
                                                      const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a * b with f16 inputs and an f16 accumulator (two f16x2 registers:
// d[0] = row g, d[1] = row g + 8, columns 2t, 2t+1).
__device__ __forceinline__ void mma_m16n8k16_f16_f16(u32 (&d)[2],
                                                     const u32 (&a)[4],
                                                     const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
      "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a * b with tf32 inputs (f32 bit patterns; see to_tf32) and f32
// accumulation. Layout of m16n8k8 (g = lane / 4, t = lane % 4):
//   a[0]: (g, t)  a[1]: (g + 8, t)  a[2]: (g, t + 4)  a[3]: (g + 8, t + 4)
//   b[0]: (k t, col g)  b[1]: (k t + 4, col g);  c as for m16n8k16.
__device__ __forceinline__ void mma_m16n8k8_tf32_f32(float (&d)[4],
                                                     const u32 (&a)[4],
                                                     const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Rounds an f32 to tf32 (round to nearest, ties away), as mma expects.
__device__ __forceinline__ u32 to_tf32(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

}  // namespace dev
}  // namespace tessel
