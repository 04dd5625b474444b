// T.use_swizzle: the block index remap that rasterizes (bx, by) in panels,
// so that blocks running together share operand tiles in L2.
//
//   RETURN_IF_ERROR(passes::RasterizeBlocks(state));
//
// Runs after lower_tile_ops: the lowering proves accesses in bounds from
// the block indices' ranges, the grid's; the remap is a permutation of the
// same ranges, which the bound analysis could not see through.
#ifndef TESSEL_SRC_PASSES_LOWER_RASTERIZE_BLOCKS_H_
#define TESSEL_SRC_PASSES_LOWER_RASTERIZE_BLOCKS_H_

#include <vector>

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// Removes the kernel's T.use_swizzle (the last one wins) and, for a grid of
// two or more dims, binds the kernel's bx and by from the raw block indices
// after the kernel's leading lets (the thread index).
absl::Status RasterizeBlocks(LoweringState& state);

// Lets binding bx and by to the block that `linear` (row-major over a gx x
// gy grid) runs under T.use_swizzle(panel, column_major); panel 0: plain
// row-major order. Also what a persistent kernel binds per tile.
std::vector<ir::Stmt> BindRasterizedBlock(const ir::Expr& linear,
                                          const ir::Var& bx, const ir::Var& by,
                                          const ir::Expr& gx,
                                          const ir::Expr& gy, int panel,
                                          bool column_major);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWER_RASTERIZE_BLOCKS_H_
