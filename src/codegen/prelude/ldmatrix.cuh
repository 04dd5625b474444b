// tessel device prelude: warp-wide shared -> register matrix loads (ldmatrix)
// and register -> shared stores (stmatrix, sm_90).
//
// Each 8x8 b16 matrix is 8 rows of 16 bytes; lane i (i < 8 * count) gives the
// address of row i % 8 of matrix i / 8. Lane l receives, per matrix, the pair
// (row l / 4, columns 2 * (l % 4) + {0, 1}); with .trans, the transposed pair.
// For an mma.m16n8k16 A fragment of rows r0.., cols k0..: lane l points at
// row r0 + l % 16, col k0 + (l / 16) * 8 and ldmatrix_x4 yields a[0..3].
//
//   u32 a[4];
//   tessel::dev::ldmatrix_x4(a, &As[swizzled_offset]);
//   u32 b[4];  // two n8 tiles of a row-major [k][n] tile
//   tessel::dev::ldmatrix_x4_trans(b, &Bs[swizzled_offset]);
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

__device__ __forceinline__ void ldmatrix_x1(u32 (&r)[1], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0])
               : "r"(smem_addr(smem)));
}

__device__ __forceinline__ void ldmatrix_x2(u32 (&r)[2], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem)));
}

__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], const void* smem) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(smem)));
}

__device__ __forceinline__ void ldmatrix_x1_trans(u32 (&r)[1],
                                                  const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0])
               : "r"(smem_addr(smem)));
}

__device__ __forceinline__ void ldmatrix_x2_trans(u32 (&r)[2],
                                                  const void* smem) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
      : "=r"(r[0]), "=r"(r[1])
      : "r"(smem_addr(smem)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4],
                                                  const void* smem) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(smem)));
}

// The same loads from a precomputed 32-bit shared address (smem_addr of the
// tile base plus a byte offset): the form the codegen emits in main loops,
// where per-thread offsets are hoisted and only the stage offset changes.
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], u32 addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], u32 addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2(u32 (&r)[2], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2_trans(u32 (&r)[2], u32 addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
      : "=r"(r[0]), "=r"(r[1])
      : "r"(addr));
}

// stmatrix is sm_90 only. The addresses follow the ldmatrix rule; lane l
// provides the pair (row l / 4, columns 2 * (l % 4) + {0, 1}) of each matrix,
// which is the mma accumulator layout once packed to b16 pairs.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TESSEL_HAS_STMATRIX 1

__device__ __forceinline__ void stmatrix_x4(u32 addr, const u32 (&r)[4]) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::
          "r"(addr),
      "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
      : "memory");
}

__device__ __forceinline__ void stmatrix_x4_trans(u32 addr, const u32 (&r)[4]) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, "
      "%4};\n" ::"r"(addr),
      "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
      : "memory");
}

__device__ __forceinline__ void stmatrix_x1(void* smem, const u32 (&r)[1]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n" ::"r"(
                   smem_addr(smem)),
               "r"(r[0])
               : "memory");
}

__device__ __forceinline__ void stmatrix_x2(void* smem, const u32 (&r)[2]) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(
          smem_addr(smem)),
      "r"(r[0]), "r"(r[1])
      : "memory");
}

__device__ __forceinline__ void stmatrix_x4(void* smem, const u32 (&r)[4]) {
  stmatrix_x4(smem_addr(smem), r);
}

__device__ __forceinline__ void stmatrix_x4_trans(void* smem,
                                                  const u32 (&r)[4]) {
  stmatrix_x4_trans(smem_addr(smem), r);
}
#endif

}  // namespace dev
}  // namespace tessel
