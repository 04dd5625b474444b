// Which tensor-core path a tile gemm can take and on which warp grid: read
// by layout inference (the accumulator's layout) and by gemm planning.
//
//   auto [wm, wn] = passes::TensorCoreWarpGrid(gemm, state);
//   if (wm == 0) { ... FMA path ... }
#ifndef TESSEL_SRC_PASSES_GEMM_WARP_GRID_H_
#define TESSEL_SRC_PASSES_GEMM_WARP_GRID_H_

#include <string>
#include <utility>

#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// Whether a gemm takes the mma.sync path (dtypes and tile shapes), and with
// which warp grid ({0, 0}: FMA path).
std::pair<int, int> MmaWarpGrid(const ir::GemmNode& gemm, int threads);

// Why MmaWarpGrid gives the gemm no grid, in the user's terms ("K = 24 is
// not a multiple of 16"); empty when it gives one.
std::string MmaPathRefusal(const ir::GemmNode& gemm, int threads);

// The tensor-core warp grid of a gemm on this target: MmaWarpGrid for
// 16-bit operands; fp8 has no mma.sync path, only wgmma (a grid only when
// its accumulator takes wgmma, WgmmaAccumulator).
std::pair<int, int> TensorCoreWarpGrid(const ir::GemmNode& gemm,
                                       const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_GEMM_WARP_GRID_H_
