// The pass state besides the IR (lowering_state.h) as text that reads back:
// the "# state" section that ends every state dump (DumpState), one fact a
// line, so that one pass can run on a dump (tests/passes/lit/).
//
//   std::string text = DumpState(state);   // pass_list.h
//   absl::StatusOr<StateDump> back =
//       ParseStateDump(text, state.target, state.config);
//   // DumpState(back->state) == text; RunPass(back->state, ...)
//
// Facts keyed by a node in memory are keyed by name in the text: buffers
// and variables by the printer's names, statements (gemm plans, epilogue
// stores, scratch buffers, pipelined loops) by their position in a
// pre-order walk of the program ("gemm 12 ..." is its 12th statement,
// blocks not counted). Buffers the IR uses but does not allocate (the
// reductions' scratch, the epilogues' staging tiles) are declared in the
// line that names them. Not written: the launch-time strides (tensor
// views specialize a compile; the passes only read them from there).
//
//   # state
//   #   threads 128
//   #   layout C_local mma 64 64 threads 128 warps 4 1 tiles 1 8 vec 1 ...
//   #   smem A_shared 0 24576
//   #   gemm 14 wgmma warps 4 1 warp_tile 16 64 tiles 1 8 ...
#ifndef TESSEL_SRC_PASSES_STATE_TEXT_H_
#define TESSEL_SRC_PASSES_STATE_TEXT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// "# state\n#   ...\n": every fact that differs from a fresh state.
std::string StateText(const LoweringState& state);

// A dump read back. The state's facts point at nodes of the program as
// read, which a pass replaces: `as_read` keeps them alive meanwhile (as a
// compile's caller keeps its input program).
struct StateDump {
  ir::Program as_read;
  LoweringState state;
};

// A dump (program text, comment sections, "# state" lines) read back: the
// program, and the facts of its state section, for this target and config.
absl::StatusOr<StateDump> ParseStateDump(std::string_view text,
                                         const Target& target,
                                         const PassConfig& config);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_STATE_TEXT_H_
