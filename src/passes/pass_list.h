// The scheduler: every pass, once, in order (Halide's lower()).
//
//   passes::LoweringState state{.program = program, .target = target,
//                               .config = config};
//   RETURN_IF_ERROR(passes::RunPasses(state));          // all passes
//   RETURN_IF_ERROR(passes::RunPasses(state, "plan_gemms"));  // stop there
//   RETURN_IF_ERROR(passes::RunPass(state, "lower_tile_ops"));  // one pass
//   std::string text = passes::DumpState(state);         // IR + state
//
// With config.dump_ir (or $TESSEL_DUMP_IR) naming a folder, the IR before
// the first pass and after each one is written there as
// <program>.<NN>_<pass>.txt.
#ifndef TESSEL_SRC_PASSES_PASS_LIST_H_
#define TESSEL_SRC_PASSES_PASS_LIST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// The pass names, in order.
std::vector<std::string> PassNames();

// Runs the passes in order; stops after `stop_after` when it names one.
absl::Status RunPasses(LoweringState& state, std::string_view stop_after = "");

// Runs the one pass named `name` (a pass test's input is a dump read back
// by ParseStateDump, state_text.h); an unknown name is an error.
absl::Status RunPass(LoweringState& state, std::string_view name);

// The program text followed by the layouts, gemm plans and shared memory
// plan (for people), then the "# state" section (StateText, for the
// parser), as dumped.
std::string DumpState(const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_PASS_LIST_H_
