// Hardware and tessel limits that the builder and the verifier both check,
// so that a program outside them is an error naming the user's line instead
// of a launch failure, a truncated value or a crash further down.
//
//   if (*c > ir::kMaxGridDim[d]) Fail(...);   // T::Kernel(1 << 40) is refused
#ifndef TESSEL_SRC_IR_LIMITS_H_
#define TESSEL_SRC_IR_LIMITS_H_

#include <cstdint>

namespace tessel::ir {

// CUDA's grid: x up to 2^31 - 1 blocks (block indices are i32), y and z up
// to 65535.
inline constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};

// Pipelined loops: num_stages buffers of every staged tile and a barrier pair
// per stage; no real tile fits more than a handful in shared memory, so a
// larger number is a mistake (it used to reach the scheduler's allocations).
inline constexpr int kMaxNumStages = 64;

// mbarrier.init takes an expected arrival count in [1, 2^20 - 1] (PTX ISA).
inline constexpr int64_t kMaxMbarrierArriveCount = (int64_t{1} << 20) - 1;

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_LIMITS_H_
