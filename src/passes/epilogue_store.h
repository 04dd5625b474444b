// TMA-store epilogues (PassConfig::disable_tma_store_epilogue, sm_90a, warp
// specialized): the consumers' T.copy of a wgmma accumulator to a global
// tile goes through a shared staging tile and the TMA, as CUTLASS's and
// FlashAttention-3's epilogues do, instead of every thread storing its
// f16x2 pairs straight to global memory.
//
//   T.copy(C_local, C[by*128:+128, bx*256:+256])    C_local: 2 warpgroups x
//                                                    64 rows, wgmma layout
//   =>  alloc C_local_stage [2, 2, 64, 64] f16, 128-byte swizzle  (32 KB)
//       for each 64-column chunk c of the tile (warpgroup g, buffer c % 2):
//         st.shared the g's converted pairs of chunk c
//         [elected thread: cp.async.bulk.wait_group.read 0]
//         fence.proxy.async.shared::cta; bar.sync 2 + g, 128
//         [elected thread: cp.async.bulk.tensor store of the [64, 64] box at
//          (by*128 + 64 g, bx*256 + 64 c); cp.async.bulk.commit_group]
//
// Each warpgroup stores its own rows, chunk by chunk, double-buffered: one
// barrier per chunk, and the staging costs two chunks per warpgroup (32 KB
// at the 128x256 tile, beside its 4 stages of 192 KB) rather than the whole
// 64 KB tile, so the pipeline keeps its depth. A 128-byte-row chunk under
// the 128-byte swizzle makes the pair stores conflict-free (the 8 rows of a
// warp's store land in 8 different 16-byte columns) and is what the TMA's
// SWIZZLE_128B reads. The box clips at the tensor's far edges: ragged M and
// N stay correct. The store of the last tile is waited for once, at the end
// of the consumer code (lower/warp_specialized.cc).
//
// Applies to a copy of the whole fragment to a rank-2 kernel parameter of
// f16 or bf16 whose rows are whole 16-byte chunks (constant), the fragment
// in the mma / wgmma layout of warpgroups stacked along M (one warp column),
// N a multiple of the chunk, with one consumer group (not ping-pong), when
// the staging fits the shared memory left (else one buffer per warpgroup;
// else none). Everything else keeps today's stores.
#ifndef TESSEL_SRC_PASSES_EPILOGUE_STORE_H_
#define TESSEL_SRC_PASSES_EPILOGUE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

struct EpilogueStorePlan {
  int param = 0;            // the global tensor's index in program.params
  int groups = 0;           // warpgroups, each storing its own rows
  int64_t group_rows = 0;   // rows of one warpgroup (the box's rows)
  int64_t chunk_cols = 0;   // columns of one chunk: 128 bytes
  int chunks = 0;           // per warpgroup
  int64_t chunk_bytes = 0;  // of one staging buffer
};

// The plan of copy c (a fragment -> global copy), or nullopt with the
// reason in *why. Does not look at the shared memory left.
std::optional<EpilogueStorePlan> PlanEpilogueStore(const ir::CopyNode& c,
                                                   const LoweringState& state,
                                                   std::string* why);

// warp_specialize: with tma_store_epilogue on, records in
// state.epilogue_stores each such copy among the statements `after` the
// pipelined loop (in their lists and allocations, not under a loop or a
// condition),
// with its staging tile, which warp_specialize allocates around the whole
// specialized block (the shared memory plan keeps it apart from the stages
// the producer fills meanwhile). `shared_bytes`: what the kernel's other
// shared buffers take.
void StageEpilogueStores(const std::vector<ir::Stmt>& after,
                         int64_t shared_bytes, LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_EPILOGUE_STORE_H_
