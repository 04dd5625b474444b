// Software pipelining of Pipelined loops (tile level).
//
//   for k in T.Pipelined(n, num_stages=3):      T.copy(A[.., k*32], As)
//     T.copy(A[...], As); T.gemm(As, ...)   =>  becomes
//
//   As = T.alloc_shared([3, 128, 32])           # one copy per stage
//   if 0 < n: T.copy(A[.., 0], As[0])          # prologue: stages 0..s-2
//   cp_async_commit()
//   if 1 < n: T.copy(A[.., 32], As[1])
//   cp_async_commit()
//   for k in T.serial(n):                       # steady state
//     cp_async_wait(1)                          # tile k has landed
//     if k + 2 < n: T.copy(A[.., (k+2)*32], As[(k + 2) % 3])
//     cp_async_commit()                         # (empty groups keep counts)
//     T.gemm(As[k % 3], ...)
//   cp_async_wait(0)                            # epilogue: drain
//
// The producers are the loop body's global -> shared copies; every shared
// buffer they write gets num_stages copies (stage-indexed first dimension).
// Barriers are not this pass's business: the barrier pass puts one after the
// wait (the cp.async data of other threads) which also retires the reads of
// the stage the prefetch overwrites.
//
// Loops the pass leaves serial (sequential semantics are always right):
// num_stages < 2, no producer copy, explicit mbarrier ops in the body (the
// user schedules those), a staged buffer used outside the loop, or
// disable_async_copy.
#ifndef TESSEL_SRC_PASSES_INJECT_PIPELINE_H_
#define TESSEL_SRC_PASSES_INJECT_PIPELINE_H_

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status InjectPipeline(LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_INJECT_PIPELINE_H_
