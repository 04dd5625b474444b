// Shared memory planning: a byte offset in the block's dynamic shared memory
// for every shared tile and mbarrier array, reusing the bytes of buffers
// whose lifetimes do not overlap, plus a scratch area for reductions and
// scans across threads.
//
//   RETURN_IF_ERROR(passes::PlanSharedMemory(state));
//   state.smem.offset.at(As.get());   // 0
//   state.smem.total_bytes;           // > 48 KB: the launch raises the limit
//
// A lifetime runs from a buffer's first to its last use in program order;
// a use inside a loop that the buffer outlives covers the whole loop (the
// next iteration comes back to it), except for tiles each iteration
// overwrites whole before reading: their bytes are shared only when the
// block would not fit otherwise or more blocks then fit on an SM (sharing
// costs barriers). Swizzled tiles of 128-byte rows start on 1 KB (wgmma's
// SWIZZLE_128B). Over the target's per-block limit the pass returns
// ResourceExhausted listing the buffers.
#ifndef TESSEL_SRC_PASSES_PLAN_SHARED_MEMORY_H_
#define TESSEL_SRC_PASSES_PLAN_SHARED_MEMORY_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status PlanSharedMemory(LoweringState& state);

// A row reduce of an mma accumulator into its rows layout: warp shuffles,
// and shared memory scratch only across warps (else a staged generic one).
bool IsMmaRowReduce(const ir::ReduceNode& r, const LoweringState& s);
// Likewise for a kRows tile into its row statistics (reduce_rows.cc).
bool IsRowsReduce(const ir::ReduceNode& r, const LoweringState& s);
// The partials of a kRows reduce across the warps of a row group, in
// RowsScratchType (at least 32 bits).
DataType RowsScratchType(DataType t);
int64_t RowsReduceScratchBytes(const ir::ReduceNode& r,
                               const FragmentLayout& l);
// A row reduce across warps publishes the partials to its scratch, syncs
// once and reads them back, and ends there: its scratch stays read after
// its last barrier. InsertBarriers puts the barrier before the slot's next
// writer (a later reduce, or the same one in the next iteration) where one
// is needed; consecutive ones take turns between two slots.
bool LeavesScratchOpen(const ir::ReduceNode& r, const LoweringState& s);

// A cumsum of a kRows tile along its rows within warps into a tile of the
// same layout: warp scans, no scratch (cumsum_rows.cc).
bool IsRowsCumsum(const ir::CumsumNode& c, const LoweringState& s);

// Scratch bytes the lowering of a reduce / cumsum needs (0 for none).
int64_t ReduceScratchBytes(const ir::ReduceNode& r, const LoweringState& s);
int64_t CumsumScratchBytes(const ir::CumsumNode& c, const LoweringState& s);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_PLAN_SHARED_MEMORY_H_
