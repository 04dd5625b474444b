// Hopper warpgroup MMA (wgmma.mma_async) for tile gemms: which gemms take it,
// and how their B operand is described to the hardware.
//
//   if (auto b = passes::WgmmaOperandB(gemm, state)) { ... b->k_major ... }
//
// A gemm takes wgmma when the target is sm_90a, PassConfig::disable_wgmma is
// off, and it fits one m64 warpgroup tile per four warps:
//  - f16/bf16 A and B, an f32 accumulator C [M, N] with M = 16 x warps: warp
//    w owns rows 16w..16w+15, so warps 4g..4g+3 (warpgroup g) own one 64-row
//    block, and the mma.m16n8 accumulator layout of a warps x 1 grid is the
//    wgmma one; N a multiple of 8 up to 256, K a multiple of 16;
//  - A in registers (a fragment, or loaded with ldmatrix as for mma.sync)
//    or, when its tile is SWIZZLE_128B-shaped too, read by the tensor cores
//    from shared memory;
//  - B a shared tile of 128-byte rows (64 f16/bf16), XOR-swizzled: tessel's
//    swizzle on such rows is the hardware's SWIZZLE_128B, K-major when
//    transpose_b (rows are n), N-major otherwise (rows are k; N = 64).
// B (and A) are read once per warpgroup by the tensor cores instead of once
// per warp by ldmatrix, and take no registers.
#ifndef TESSEL_SRC_PASSES_WGMMA_H_
#define TESSEL_SRC_PASSES_WGMMA_H_

#include <optional>

#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// The target and the pass config allow wgmma.
bool WgmmaEnabled(const LoweringState& state);

// Shapes, dtypes and scopes fit (before layouts and pipeline stages exist).
bool WgmmaShapeFits(const ir::GemmNode& gemm, int threads);

// Layout inference: gemms with the default (square) warp policy whose
// accumulators only wgmma-shaped gemms write get the full-row policy, the
// warps x 1 grid wgmma needs.
ir::Stmt PreferWgmmaWarpGrid(const ir::Stmt& body, int threads);

// A shared operand the lowering can hand to wgmma through a descriptor: a
// swizzled tile of 128-byte rows whose region starts on the swizzle atom
// (row multiple of 8; along K a multiple of 16 columns) and, when the
// operand is M/N-major, spans exactly one 64-element row.
struct WgmmaOperand {
  bool k_major = false;  // K contiguous: A not transposed, B transposed
};
// B (always shared memory).
std::optional<WgmmaOperand> WgmmaOperandB(const ir::GemmNode& gemm,
                                          const LoweringState& state);
// A from shared memory too (else A goes through registers): each
// warpgroup reads its own 64 rows.
std::optional<WgmmaOperand> WgmmaOperandA(const ir::GemmNode& gemm,
                                          const LoweringState& state);

// Descriptor strides of a SWIZZLE_128B tile: 8-row groups 1024 bytes apart
// (SBO); the other stride (LBO) only matters past one 64-element atom,
// which these tiles never cross.
inline constexpr int kWgmmaGroupBytes = 1024;

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WGMMA_H_
