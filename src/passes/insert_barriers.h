// Barrier insertion (tile level): a planner finds every shared-memory hazard
// between block-collective statements and an inserter puts one
// __syncthreads (SyncThreadsNode) right before the statement that would
// race, so that the user never writes one.
//
//   RETURN_IF_ERROR(passes::InsertBarriers(state));
//
// The planner walks each statement list keeping the accesses (buffer, read
// or write, stage index) made since the last barrier. A statement whose
// accesses conflict with those (same or aliased buffer, one side writes,
// not provably different stages) gets a barrier before it. A loop is
// re-scanned across its back edge: the accesses after the body's last
// barrier against the body's first ones in the next iteration (loop
// variable + 1), so `As[(k + 2) % 3]` written in iteration k + 1 does not
// conflict with `As[(k + 1) % 3]` read in iteration k, but `As[k % 2]` in a
// two-stage loop does; a loop of at most one iteration has no back edge. A
// row reduce across warps (LeavesScratchOpen) counts as a write of its
// scratch slot, its own barrier, and a read of the slot left pending, so
// the slot's next writer waits for its readers. cp_async_wait counts as the
// write of every cp.async-filled buffer (the data of other threads lands
// there), so a barrier follows each wait before the data is read. Atomics
// to global memory never need one; an mbarrier wait whose barrier every
// thread arrives on is itself a full barrier. A barrier is never placed
// inside a branch whose condition differs between threads: such a program
// is rejected with FailedPrecondition.
//
// Skipped entirely with PassConfig::disable_thread_sync (tests of the race
// detector).
#ifndef TESSEL_SRC_PASSES_INSERT_BARRIERS_H_
#define TESSEL_SRC_PASSES_INSERT_BARRIERS_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status InsertBarriers(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_INSERT_BARRIERS_H_
