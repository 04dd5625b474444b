// What the scheduler passes share besides the IR: the target, the pass
// config, the fragment layouts, the shared memory plan and the facts the
// runtime must check at launch. Passes read and update it; each is still
// one IR -> IR step on state.program.
//
//   passes::LoweringState state{.program = program, .target = target,
//                               .config = config};
//   RETURN_IF_ERROR(passes::RunPipeline(state));
//   codegen::EmitCuda(state);
#ifndef TESSEL_SRC_PASSES_LOWERING_STATE_H_
#define TESSEL_SRC_PASSES_LOWERING_STATE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/ir/program.h"
#include "src/passes/fragment_layout.h"
#include "tessel/target.h"

namespace tessel::passes {

// A launch-time requirement on a parameter: its last dimension must be a
// multiple of `multiple` and its pointer aligned to `multiple` elements
// (vectorized accesses rely on both).
struct AlignmentRequirement {
  int param = 0;
  int multiple = 1;
  std::string reason;  // "16-byte cp.async copies"
};

struct SharedPlan {
  // Byte offset in the dynamic shared memory of every shared / barrier
  // buffer (by node; the lowering maps its flattened buffers too).
  std::unordered_map<const ir::BufferNode*, int64_t> offset;
  std::unordered_map<const ir::BufferNode*, int64_t> bytes;
  int64_t scratch_offset = 0;  // scratch for reductions across threads
  int64_t scratch_bytes = 0;
  int64_t total_bytes = 0;
  // Byte ranges of two buffers overlap (reuse): accesses to them conflict.
  bool MayAlias(const ir::BufferNode* a, const ir::BufferNode* b) const;
};

struct LoweringState {
  ir::Program program;
  Target target;
  PassConfig config;
  // Fragment layouts, by fragment buffer node.
  std::unordered_map<const ir::BufferNode*, FragmentLayout> layouts;
  SharedPlan smem;
  std::vector<AlignmentRequirement> alignment;
  int threads = 0;
  // Lowering sets these for the codegen.
  ir::Var thread_var;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWERING_STATE_H_
