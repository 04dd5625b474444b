// Tile-op lowering: block-collective tile ops become per-thread code on the
// baseline instruction set (sm_80 and up, so Hopper too):
//
//   T.copy(A[...], As)   -> cp.async 16 B per thread chunk (zero-filled past
//                           the tensor edge) or vectorized ld/st
//   T.gemm(As, Bs, acc)  -> ldmatrix + mma.sync m16n8k16 over the warp grid
//                           the layout pass chose, or on sm_90a
//                           wgmma.mma_async where the gemm fits (wgmma.h);
//                           FMA loops for other dtypes
//   Parallel loops       -> loops over each thread's local elements
//   T.reduce_*           -> thread, then warp shuffle, then shared memory
//   T.cumsum, T.fill, T.atomic_add (vectorized f32x2/x4, f16x2), mbarriers
//
// Fragments become per-thread local arrays shaped by their layout; shared and
// global accesses become flat (one index, swizzle applied). TMA and warp
// specialization are not built; they would be a further lowering before
// this one that leaves what it handled lowered. T.use_swizzle is left to
// RasterizeBlocks, the async-proxy fences wgmma needs to FenceAsyncProxy
// (both run after this one). The code: src/passes/lower/ (lowerer.h).
#ifndef TESSEL_SRC_PASSES_LOWER_LOWER_TILE_OPS_H_
#define TESSEL_SRC_PASSES_LOWER_LOWER_TILE_OPS_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status LowerTileOps(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWER_LOWER_TILE_OPS_H_
