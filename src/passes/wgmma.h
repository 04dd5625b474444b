// Hopper warpgroup MMA (wgmma.mma_async) for tile gemms: which gemms take it,
// and how their B operand is described to the hardware.
//
//   if (auto b = passes::WgmmaOperandB(gemm, state)) { ... b->k_major ... }
//
// A gemm takes wgmma when the target is sm_90a, PassConfig::disable_wgmma is
// off, and it fits m64 warpgroup tiles:
//  - f16/bf16 A and B, an f32 accumulator C [M, N] with M a multiple of 64
//    x warpgroups: warpgroup g owns rows g*M/groups.. and issues one m64
//    wgmma per 64 of them and per N piece (N up to 256 each,
//    WgmmaInstructionN); the accumulator takes FragmentLayout::Wgmma
//    (the mma.m16n8 C layout, repeated per m64 block); N a multiple of 8,
//    K of 16; or, M a multiple of 64 only, the warpgroups split N
//    (WgmmaSplitsN, FragmentLayout::WgmmaCols): each all rows of A and
//    its N / groups columns of B and C;
//  - or fp8 (e4m3 / e5m2, mixed allowed) A and B with an f32 accumulator,
//    one m64nNk32 per 32 of K: wgmma reads fp8 only K-major, so A must be
//    a shared [M, K] tile and B a shared [N, K] one (transpose_b); other
//    fp8 gemms run as FMA loops and WgmmaFp8Refusal says why;
//  - A in registers (a fragment, or loaded with ldmatrix as for mma.sync)
//    or, when its tile is SWIZZLE_128B-shaped too, read by the tensor cores
//    from shared memory;
//  - B a shared tile of rows a multiple of 128 bytes, XOR-swizzled: on
//    128-byte rows tessel's swizzle is the hardware's SWIZZLE_128B; wider
//    rows are stored as 128-byte column atoms (Layout::atoms, set by layout
//    inference), LBO = one atom's bytes apart. K-major when transpose_b
//    (rows are n), N-major otherwise (rows are k).
// B (and A) are read once per warpgroup by the tensor cores instead of once
// per warp by ldmatrix, and take no registers.
#ifndef TESSEL_SRC_PASSES_WGMMA_H_
#define TESSEL_SRC_PASSES_WGMMA_H_

#include <optional>
#include <string>
#include <unordered_set>

#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// The target and the pass config allow wgmma.
bool WgmmaEnabled(const LoweringState& state);

// Shapes, dtypes and scopes fit (before layouts and pipeline stages exist).
bool WgmmaShapeFits(const ir::GemmNode& gemm, int threads);

// Too few rows for an m64 per warpgroup, the warpgroups split N instead
// (FragmentLayout::WgmmaCols): M a multiple of 64, N of 8 x warpgroups, A
// a shared tile that every warpgroup reads whole (16-bit types).
bool WgmmaSplitsN(const ir::GemmNode& gemm, int threads);

bool IsFp8(DataType t);
// Both operands fp8: no mma.sync path, wgmma or FMA loops.
bool IsFp8Gemm(const ir::GemmNode& gemm);
// The K of one wgmma: 32 bytes of A's row, k16 for 16-bit types and k32
// for fp8 (a k step is one 32-byte column of the 128-byte swizzle atom).
int WgmmaInstructionK(DataType a);

// Why an fp8 gemm does not take wgmma ("" when it may): the reason
// CompiledKernel::schedule() prints next to its FMA loops.
std::string WgmmaFp8Refusal(const ir::GemmNode& gemm,
                            const LoweringState& state);

// Layout inference: gemms with the default (square) warp policy whose
// accumulators only wgmma-shaped gemms write get the full-row policy, the
// warps x 1 grid wgmma needs.
ir::Stmt PreferWgmmaWarpGrid(
    const ir::Stmt& body, int threads,
    const std::unordered_set<const ir::BufferNode*>& declined = {});

// The N of each wgmma of a gemm with accumulator width n: n itself up to
// 256, else equal pieces (or 256-wide ones and a last smaller one).
inline constexpr int kWgmmaMaxN = 256;
int WgmmaInstructionN(int64_t n);

// A shared operand the lowering can hand to wgmma through a descriptor: a
// swizzled tile of rows a multiple of 128 bytes (8k rows) whose region
// starts on the swizzle atom (row multiple of 8; along K a multiple of one
// k step, along M/N of one atom).
struct WgmmaOperand {
  bool k_major = false;  // K contiguous: A not transposed, B transposed
  // Bytes between 128-byte column atoms (the descriptor's LBO for an
  // M/N-major operand), 0 for one-atom rows.
  int atom_bytes = 0;
};
// B (always shared memory).
std::optional<WgmmaOperand> WgmmaOperandB(const ir::GemmNode& gemm,
                                          const LoweringState& state);
// A from shared memory too (else A goes through registers): each
// warpgroup reads its own 64 rows.
std::optional<WgmmaOperand> WgmmaOperandA(const ir::GemmNode& gemm,
                                          const LoweringState& state);

// Descriptor strides of a SWIZZLE_128B tile: 8-row groups 1024 bytes apart
// (SBO); the other stride (LBO) is the atom stride of an M/N-major operand
// wider than one atom, and unused (16) otherwise: a K-major k16 step never
// crosses an atom, its descriptor starts in the atom it reads.
inline constexpr int kWgmmaGroupBytes = 1024;
inline constexpr int kWgmmaUnusedLbo = 16;

// Whether a gemm's accumulator takes FragmentLayout::Wgmma: wgmma is
// enabled and its shape fits with the full-row policy.
bool WgmmaAccumulator(const ir::GemmNode& gemm, const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WGMMA_H_
