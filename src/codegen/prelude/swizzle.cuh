// tessel device prelude: XOR-swizzled shared-memory tile layouts.
//
// A row-major shared tile of kRowElems elements per row is cut into 16-byte
// chunks. The swizzle XORs the chunk index (its low bits only, so a chunk
// stays inside its aligned 128-byte segment) with a few bits of the row, so
// that the 8 rows an ldmatrix phase reads, or a cp.async phase writes, at
// the same logical column land in 8 different bank groups. The same
// function maps (row, col) to the element offset for stores and for loads,
// so the codegen calls it on both sides.
//
// Rows of >= 128 bytes: chunk ^= row % 8 (3 bits).
// Rows of 64 bytes:     chunk ^= (row / 2) % 4 (two rows share 128 bytes).
// Rows of 32 bytes:     chunk ^= (row / 4) % 2.
// Rows of 16 bytes:     no swizzle (a row is one chunk).
// Valid for rows whose byte size is a power of two times 16 or any multiple
// of 128, and for `col` multiple of the element count per access when the
// access is wider than one element (16-byte accesses need col % 8 == 0 for
// 2-byte types).
//
//   constexpr int kBK = 32;  // f16: 64-byte rows
//   int off = tessel::dev::swizzle_offset<kBK, 2>(row, col);
//   tessel::dev::cp_async<16>(&As[off], src, in_bounds);
//   ... later: tessel::dev::ldmatrix_x4(a, &As[tessel::dev::swizzle_offset<kBK,
//   2>(r, c)]);
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

// The number of row bits that feed the XOR, for rows of kRowBytes.
template <int kRowBytes>
struct SwizzleShape {
  static_assert(kRowBytes % 16 == 0, "swizzled rows are whole 16-byte chunks");
  static_assert(kRowBytes % 128 == 0 || kRowBytes == 64 || kRowBytes == 32 ||
                    kRowBytes == 16,
                "swizzled rows are 16, 32, 64 or a multiple of 128 bytes");
  // log2 of how many rows share one 128-byte line.
  static constexpr int kRowShift = kRowBytes >= 128  ? 0
                                   : kRowBytes == 64 ? 1
                                   : kRowBytes == 32 ? 2
                                                     : 3;
  // Mask of the chunk bits the XOR touches.
  static constexpr int kMask = kRowBytes >= 128  ? 7
                               : kRowBytes == 64 ? 3
                               : kRowBytes == 32 ? 1
                                                 : 0;
};

// Swizzled 16-byte chunk index of logical chunk `chunk` in row `row`.
template <int kRowBytes>
__device__ __forceinline__ int swizzle_chunk(int row, int chunk) {
  using S = SwizzleShape<kRowBytes>;
  return chunk ^ ((row >> S::kRowShift) & S::kMask);
}

// Element offset of logical (row, col) in a swizzled row-major tile of
// kRowElems elements of kElemBytes each.
template <int kRowElems, int kElemBytes>
__device__ __forceinline__ int swizzle_offset(int row, int col) {
  constexpr int kChunkElems = 16 / kElemBytes;
  static_assert(16 % kElemBytes == 0, "element size must divide 16 bytes");
  const int chunk =
      swizzle_chunk<kRowElems * kElemBytes>(row, col / kChunkElems);
  return row * kRowElems + chunk * kChunkElems + col % kChunkElems;
}

// Unswizzled row-major offset: the same signature, for tiles the layout pass
// leaves plain (no gemm operand, or swizzle switched off).
template <int kRowElems, int kElemBytes>
__device__ __forceinline__ int linear_offset(int row, int col) {
  return row * kRowElems + col;
}

}  // namespace dev
}  // namespace tessel
