// Small-M gemms on the tensor cores: a gemm whose accumulator has fewer rows
// than the block's tensor-core tile (decode attention: a GQA group of 4-16
// query heads, MQA, 2-4 speculative tokens) computes a tile padded to
// 16 x warps rows, one m16 tile per warp (warps x 1). On sm_90a that is one
// m64 wgmma per warpgroup; elsewhere one mma.sync m16n8k16 tile row per warp.
//
// Why it is sound: row r of C depends only on row r of A. The padding rows
// of the accumulator (FragmentLayout::Padded, rows M.. of the tile) are
// never read: FragmentLayout::Valid() excludes them, so Parallel loops,
// copies and stores skip them, and row reductions combine each row alone.
// A is read by ldmatrix with its rows clamped to M - 1 (every address stays
// in A's tile; the padding rows get copies of row M - 1), into registers:
// on sm_90a the wgmma takes A from registers and B from shared memory
// through its descriptor, as for M >= 64. Nothing is allocated for the
// padding in shared memory.
//
// clang-format off
//   C acc_s [4, 64] f32 += Q_shared [4, 128] f16 * K_shared [64, 128]^T
// before (FMA loops, a [4, 64] blocked layout, 2 elements per thread):
//   for k in 0..128: acc_s_local[e] += Q_shared[..][k] * K_shared[..][k]
// after (sm_90a, 128 threads):
//   layout acc_s: mma[4, 64] warps 4x1 local [1][8][4] rows padded to 64
//   ldmatrix x4 a_frag[kk] <- Q_shared[min(warp*16 + lane%16, 3)][kk*16..]
//   wgmma.m64n64k16 acc_s, a_frag[kk], desc(K_shared, kk)   (8 k16 steps)
//   Parallel/copies over acc_s: guarded by (row < 4)
// clang-format on
#ifndef TESSEL_SRC_PASSES_SMALL_M_GEMM_H_
#define TESSEL_SRC_PASSES_SMALL_M_GEMM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/ir/stmt.h"

namespace tessel::passes {

// A gemm operand's (or accumulator's) matrix extents: its two non-unit
// dims, or, when a unit M (a [1, K] A, a [1, N] C) leaves fewer, its last
// two dims; nullopt unless constant and 2-D.
std::optional<std::vector<int64_t>> GemmMatrixExtents(const ir::Region& r);
// The indices into r's buffer of matrix element (row, col), by the dims
// GemmMatrixExtents names.
std::vector<ir::Expr> GemmMatrixIndices(const ir::Region& r,
                                        const ir::Expr& row,
                                        const ir::Expr& col);

// Rows of the tile such a gemm computes (16 x warps), or 0 when the gemm
// is not a small-M tensor-core gemm: f16 / bf16 A and B, an f32
// accumulator [M, N] with M below 64 and below 16 x warps, A a shared
// [M, K] tile or a fragment (not transposed), B a shared tile, N and K
// multiples of 16.
int64_t SmallMPaddedRows(const ir::GemmNode& gemm, int threads);

// For a gemm with M below 64 that SmallMPaddedRows refuses: why, in the
// user's terms ("N = 4 is below ..."); empty otherwise.
std::string SmallMRefusal(const ir::GemmNode& gemm, int threads);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_SMALL_M_GEMM_H_
