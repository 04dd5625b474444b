// Per-thread memory: the bytes each thread of a kernel holds in its
// fragments (as layout inference spread them over the block's threads) and
// local arrays, and the limit compile() holds them to.
//
//   RETURN_IF_ERROR(passes::CheckThreadMemory(state));  // after the layouts
//   passes::MeasureThreadMemory(state).total_bytes;     // 1536
//
// Every allocation counts, as if all were live at once (the generated code
// declares each array where it is allocated; NVRTC may or may not overlap
// sibling scopes), and each element counts at least 4 bytes: an 8- or
// 16-bit element takes a register and an unrolled instruction of its own
// too. Over kMaxThreadMemoryBytes the check returns ResourceExhausted
// naming the largest array, its shape, its bytes per thread and the user's
// line that allocated it.
//
// The limit, far below CUDA's 512 KiB of local memory per thread: the
// lowering unrolls loops over each thread's elements, and NVRTC's time grows
// faster than linearly with them. An element-wise pass over a f32 fragment
// (sm_80, NVRTC 13 on a 2-core machine) compiles in 0.5 s at
// 1 KiB per thread, 1.6 s at 2 KiB, 22 s at 4 KiB, 83 s at 8 KiB and over
// 100 s at 16 KiB. The largest real kernels (flash attention backward,
// linear attention backward, row softmax) hold 1.4 KiB or less per thread
// (tessel_dump_thread_memory), and anything past about 1 KiB spills from
// the 255 registers a thread has anyway: 4 KiB leaves them three times
// their size. (NVRTC time also depends on the loops' shape: the FMA gemm
// path is slow at sizes well under the limit, a matter for its lowering.)
#ifndef TESSEL_SRC_PASSES_THREAD_MEMORY_H_
#define TESSEL_SRC_PASSES_THREAD_MEMORY_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

inline constexpr int64_t kMaxThreadMemoryBytes = 4 * 1024;

struct ThreadArray {
  const ir::AllocateNode* alloc = nullptr;  // its buffer and the user's line
  std::vector<int64_t> local_shape;         // the array one thread holds
  // Elements times max(element bytes, 4); saturates at INT64_MAX.
  int64_t bytes = 0;
};

struct ThreadMemory {
  std::vector<ThreadArray> arrays;  // fragments and locals, program order
  int64_t total_bytes = 0;          // saturates at INT64_MAX
};

// Fragments (with their layouts in state.layouts) and local arrays of
// constant shape; others are the verifier's to refuse.
ThreadMemory MeasureThreadMemory(const LoweringState& state);

absl::Status CheckThreadMemory(const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_THREAD_MEMORY_H_
