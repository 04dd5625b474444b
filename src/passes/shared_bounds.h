// A static check of a lowered kernel against its shared memory plan: every
// shared memory access (loads and stores, vector moves, ldmatrix, cp.async
// and TMA boxes, mbarriers) reaches no byte past its buffer's planned bytes
// nor past the block's dynamic allocation. The largest byte of an access
// comes from the ranges of the thread index, the block indices and the loop
// variables (an interval analysis that follows swizzles: & ^ | >> <<), and
// the branch conditions on them (the producer / consumer split). For tests:
// the runtime trusts the plan (a scratch sized for another lowering wrote
// past the end of mla_decode's allocation on the GPU only).
//
// clang-format off
//   SharedBoundsReport r = CheckSharedBounds(lowered.state);
//   EXPECT_TRUE(r.violations.empty()) << r.violations[0];
//   r.checked;     // accesses bounded and inside
//   r.unbounded;   // indices the analysis could not bound (not checked)
// clang-format on
#ifndef TESSEL_SRC_PASSES_SHARED_BOUNDS_H_
#define TESSEL_SRC_PASSES_SHARED_BOUNDS_H_

#include <string>
#include <vector>

#include "src/passes/lowering_state.h"

namespace tessel::passes {

struct SharedBoundsReport {
  int checked = 0;
  int unbounded = 0;
  // "red_scratch_1: bytes [0, 8192) of an access, 512 planned (offset
  // 152064 of 152576)": one line per access past its buffer.
  std::vector<std::string> violations;
};

// `state` after every pass (runtime::Lower's Lowered::state).
SharedBoundsReport CheckSharedBounds(const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_SHARED_BOUNDS_H_
