// wgmma reads shared memory through the async proxy: what threads wrote
// through the generic one (stores, cp.async) must be fenced before the
// barrier that publishes it, by every writer (fence.proxy.async).
//
//   RETURN_IF_ERROR(passes::FenceAsyncProxy(state));
//
// Runs after lower_tile_ops, on the lowered code: it needs the barriers
// insert_barriers placed and the tensor-core reads the lowering emitted.
#ifndef TESSEL_SRC_PASSES_LOWER_FENCE_PROXY_ASYNC_H_
#define TESSEL_SRC_PASSES_LOWER_FENCE_PROXY_ASYNC_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// In a kernel with an async-proxy read of shared memory (wgmma, bulk
// reductions), a fence_proxy_async before every __syncthreads() and
// mbarrier arrive; with bulk reductions a wait for their reads too.
absl::Status FenceAsyncProxy(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWER_FENCE_PROXY_ASYNC_H_
