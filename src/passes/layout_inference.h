// Layout inference: decides how every fragment is spread over the block's
// threads and which shared tiles are swizzled.
//
//   RETURN_IF_ERROR(passes::InferLayouts(state));
//   state.layouts.at(acc.get()).ToString();   // "mma[128, 128] warps 2x2 ..."
//
// - A gemm's accumulator gets the mma.m16n8k16 layout with the warp grid of
//   its policy (f16/bf16 inputs, f32 accumulator, tile divisible by the warp
//   grid); other gemms take the FMA path and a blocked accumulator. On
//   sm_90a, default-policy gemms that fit wgmma get the full-row policy
//   first (wgmma.h: PreferWgmmaWarpGrid).
// - Fragments used together in a Parallel loop share its layout; a rank-1
//   fragment indexed by the rows of an mma-laid-out tile (or the result of a
//   row reduction of one) gets the row-wise layout, so that flash-attention
//   style code (row max, rescale) stays in registers.
// - Every other fragment gets a blocked layout with 16-byte chunks.
// - Fragments and local arrays over the per-thread limit (thread_memory.h)
//   are ResourceExhausted naming the user's line.
// - Shared operands of mma gemms are swizzled (128/64/32-byte XOR swizzle by
//   row size) unless annotate_layout asked otherwise; annotate_layout with a
//   swizzled layout is obeyed for any shared buffer.
// The fragments' part is layout_inference/fragment_layouts.h; which
// tensor-core path a gemm takes, gemm_warp_grid.h.
#ifndef TESSEL_SRC_PASSES_LAYOUT_INFERENCE_H_
#define TESSEL_SRC_PASSES_LAYOUT_INFERENCE_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status InferLayouts(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LAYOUT_INFERENCE_H_
