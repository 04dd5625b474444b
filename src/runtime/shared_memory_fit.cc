// CheckSharedMemoryFits: the scheduler's own shared memory plan, for
// factories that size their tiles per target.
#include "src/passes/pass_list.h"
#include "tessel/compile.h"
#include "tessel/program.h"

namespace tessel {

absl::Status CheckSharedMemoryFits(const Program& program,
                                   const Target& target) {
  if (target.kind() == Target::Kind::kCpu) return absl::OkStatus();
  if (!target.status().ok()) return target.status();
  passes::LoweringState state;
  state.program = program.ir();
  state.target = target;
  // Layout inference's own errors (a thread's fragments over their limit
  // among them) are compile()'s to report: fewer stages would not help.
  passes::LoweringState layouts = state;
  if (!passes::RunPasses(layouts, "layout_inference").ok())
    return absl::OkStatus();
  // The passes up to the planner: it returns ResourceExhausted over the
  // target's limit; later passes and the codegen do not change the bytes.
  absl::Status status = passes::RunPasses(state, "plan_shared_memory");
  if (status.code() == absl::StatusCode::kResourceExhausted) return status;
  return absl::OkStatus();
}

}  // namespace tessel
