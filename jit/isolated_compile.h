// Compiles in a forked child process, so that a compiler crash (NVRTC runs
// ptxas in-process, and it has been seen to SIGSEGV) becomes a Status naming
// the signal instead of killing the host.
//
//   absl::StatusOr<Cubin> cubin = tessel::jit::CompileIsolated(
//       source, {.arch = "sm_90a"}, absl::Minutes(2));
//   // on a crash: Internal, "... killed by signal 11 (SIGSEGV) ..."
//   // past the timeout: DeadlineExceeded (the child is killed)
//
// The arch is resolved in the parent (a forked child must not touch the
// driver). The child compiles and writes the result to a pipe; the parent
// reads it, waits for the child, and bumps the NVRTC counter. PTX sources
// (SourceLanguage::kPtx) go through ptxas the same way: the child runs the
// ptxas program (a ptxas crash is a Status even without isolation). A child
// killed at the timeout leaves its ptxas to finish (or die writing to the
// closed pipe) and its temp folder behind.
#ifndef TESSEL_JIT_ISOLATED_COMPILE_H_
#define TESSEL_JIT_ISOLATED_COMPILE_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

absl::StatusOr<Cubin> CompileIsolated(
    const CudaSource& source, const CompileOptions& options,
    absl::Duration timeout = absl::Minutes(5));

namespace internal {
// Runs in the child right after fork(), before compiling (nullptr: nothing).
// Tests use it to make the child crash or hang.
void SetIsolatedChildHookForTesting(void (*hook)());
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_ISOLATED_COMPILE_H_
