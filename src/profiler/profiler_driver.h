// The driver entry points do_bench needs beyond jit's table: asynchronous
// memset (the L2 flush) and stream capture into CUDA graphs. Loaded from the
// same library as tessel::jit::Driver(), after it succeeded.
//
//   ASSIGN_OR_RETURN(const ProfilerDriverApi* extra, ProfilerDriver());
//   extra->cuMemsetD32Async(buffer, 0, words, stream);
#ifndef TESSEL_SRC_PROFILER_PROFILER_DRIVER_H_
#define TESSEL_SRC_PROFILER_PROFILER_DRIVER_H_

#include <cuda.h>  // types only

#include "absl/status/statusor.h"

namespace tessel::profiler {

#define TESSEL_PROFILER_DRIVER_ENTRY_POINTS(X) \
  X(cuMemsetD32Async)                          \
  X(cuStreamBeginCapture)                      \
  X(cuStreamEndCapture)                        \
  X(cuGraphInstantiate)                        \
  X(cuGraphGetNodes)                           \
  X(cuGraphLaunch)                             \
  X(cuGraphExecDestroy)                        \
  X(cuGraphDestroy)

struct ProfilerDriverApi {
#define TESSEL_PROFILER_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  TESSEL_PROFILER_DRIVER_ENTRY_POINTS(TESSEL_PROFILER_DRIVER_MEMBER)
#undef TESSEL_PROFILER_DRIVER_MEMBER
};

// The table, or Unavailable (no driver, or a driver lacking an entry point).
absl::StatusOr<const ProfilerDriverApi*> ProfilerDriver();

}  // namespace tessel::profiler

#endif  // TESSEL_SRC_PROFILER_PROFILER_DRIVER_H_
