// How every fragment is spread over the block's threads: seeded by the gemm
// accumulators (mma.m16n8k16 or wgmma rows), spread through the Parallel
// loops, reductions, scans and copies that use them, row layouts for tiles
// reduced or scanned along their rows, blocked 16-byte chunks for the rest.
//
//   RETURN_IF_ERROR(InferFragmentLayouts(state, uses));
//   state.layouts.at(acc.get()).ToString();   // "mma[128, 128] warps 2x2 ..."
//
// A register A operand must be laid out as its gemm reads it; when wgmma's
// rows are what made it mismatch, the gemms involved go back to mma.sync
// (state.wgmma_declined) and the layouts are inferred again.
#ifndef TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_LAYOUTS_H_
#define TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_LAYOUTS_H_

#include "absl/status/status.h"
#include "src/passes/layout_inference/fragment_uses.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// Fills state.layouts for every fragment `uses` found.
absl::Status InferFragmentLayouts(LoweringState& state,
                                  const FragmentUses& uses);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_LAYOUTS_H_
