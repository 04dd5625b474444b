// Warp specialization of a Pipelined loop on sm_90a (tile level): a
// producer warpgroup moves the tiles with the TMA into a ring of stages,
// the kernel's own threads consume them, and full / empty mbarriers
// between them replace the cp.async waits and block-wide barriers.
//
// clang-format off
//   for k in T.Pipelined(n, num_stages=3):    As = T.alloc_shared([3, 128, 64])
//     T.copy(A[.., k*64], As)                 full = T.alloc_barrier(3)
//     T.copy(B[k*64, ..], Bs)                 empty = T.alloc_barrier(3)
//     T.gemm(As, Bs, C)              =>       T.mbarrier_init(full, [1, 1, 1])
//                                             T.mbarrier_init(empty, [256, ..])
//                                             T.sync_threads()
//   with T.warp_specialize(producer_threads=128):
//     producer:                               # one thread of the producers
//       for k in T.serial(n):
//         T.mbarrier_wait_parity(empty[k % 3], (k / 3 + 1) % 2)
//         T.mbarrier_expect_tx(full[k % 3], 32768)
//         T.copy(A[.., k*64], As[k % 3], barrier=full[k % 3])   # TMA
//         T.copy(B[k*64, ..], Bs[k % 3], barrier=full[k % 3])
//         T.mbarrier_arrive(full[k % 3])
//     consumer:                               # the kernel's threads
//       ... statements before the loop ...
//       for k in T.serial(n):
//         T.mbarrier_wait_parity(full[k % 3], k / 3 % 2)
//         T.gemm(As[k % 3], Bs[k % 3], C)
//         T.mbarrier_arrive(empty[k % 3])
//       ... statements after it ...
// clang-format on
//
// The empty barriers' first wait (parity 1 of a fresh barrier) passes at
// once: every stage starts free. On a persistent grid (the default for
// constant 1-d and 2-d grids; PassConfig::disable_persistent_grid) the
// kernel's grid becomes the tile count, launch() caps it at the SM count,
// and both roles wrap their part in `for tile in T.serial(...)`, binding
// (bx, by) per tile through the kernel's use_swizzle rasterization and
// counting the iteration i = tile * n + k across tiles. The lowering keeps one
// wgmma group in flight in the consumer loop and releases a stage when its
// reads retire (lower/wgmma_pipeline.cc).
//
// Ping-pong (PassConfig::pingpong_consumers; persistent grid, 128 threads,
// no shared memory besides the copied tiles, no reductions): two copies of
// the kernel's threads consume, as CUTLASS's ping-pong warpgroups. Group g
// (of the node's consumer_groups = 2) takes the block's tiles
// t = 2 * turn + g, with its own accumulator, so its epilogue runs while
// the other's mainloop does; the producer fills one ring in tile order.
// A pair of mbarriers makes the mainloops take turns:
//   T.mbarrier_wait_parity(math_order[group], (turn + 1 - group) % 2)
//   for k: ...                      # the consumer loop above
//   T.mbarrier_arrive(math_order[1 - group])
// which also keeps the full barriers' parity waits exact (a group never
// waits on a stage whose earlier fill the other group has not waited on).
//
// Cluster pairs (PassConfig::cluster_size 2; persistent 2-d grid, one
// consumer group, an even tile count along the paired block index): blocks
// 2c and 2c + 1 take tiles next to each other along by (or bx), and a copy
// whose source does not use that index is shared: each block loads half of
// every box's rows and the TMA multicasts it into both (lower/tma_copy.cc).
// The full barriers expect the whole tile as before; the empty barriers
// count two arrivals per consumer warp (this block's lane 0, the peer's
// lane 1: a stage is refilled only when both blocks have read it). A
// cluster_sync after the barrier inits, and the producer waits on the empty
// barriers for `stages` more iterations before it exits, so no block leaves
// while its peer may still arrive on its barriers.
//
// Applies to the kernel's one Pipelined loop (num_stages >= 2, 128, 256 or
// 384 threads) whose global -> shared copies the TMA can all make
// (tma_boxes.h) and whose body reads their tiles only through gemms, after
// the copy; the rest of the body (a softmax between two gemms, as flash
// attention's) goes to the consumers in order. The copied tiles are used
// nowhere else, no user mbarriers or barriers in the kernel. Off with
// disable_tma_lower, disable_warp_specialized or disable_async_copy, or on
// other targets: then inject_pipeline makes today's cp.async pipeline.
#ifndef TESSEL_SRC_PASSES_WARP_SPECIALIZE_H_
#define TESSEL_SRC_PASSES_WARP_SPECIALIZE_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// The producer warpgroup's size; one warp's where the consumers are one
// warpgroup of a grid that is not persistent (several blocks an SM).
inline constexpr int kProducerThreads = 128;
inline constexpr int kProducerWarp = 32;

absl::Status WarpSpecialize(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WARP_SPECIALIZE_H_
