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

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// Removes the kernel's T.use_swizzle (the last one wins) and, for a grid of
// two or more dims, binds the kernel's bx and by from the raw block indices
// after the kernel's leading lets (the thread index).
absl::Status RasterizeBlocks(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWER_RASTERIZE_BLOCKS_H_
