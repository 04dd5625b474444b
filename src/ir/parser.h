// Reads the printer's text (src/ir/printer.h) back into a program: the
// format of golden tests, TESSEL_DUMP_IR dumps and the per-pass lit tests
// (tests/passes/lit/), so that one pass can run on a hand-written input.
//
//   absl::StatusOr<ir::Program> p = ir::ParseProgram(text);
//   // ir::ToString(*p) == text for any text the printer wrote
//
// Nodes are built as printed (no folding: "x - 3" is a subtraction). Names
// resolve as the printer wrote them: one node per name in scope (loop
// variables scoped to their loop); "k_1" while a "k" is in scope is a node
// named k (the printer's clash suffix); a let's variable
// (T.call_intrin(i32, "let", v, value)) takes its value's dtype. Comment
// lines (# ...) and trailing "# file.cc:42" locations are skipped. Errors
// name the line and column: "3:17: unknown name 'A_shard'".
#ifndef TESSEL_SRC_IR_PARSER_H_
#define TESSEL_SRC_IR_PARSER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/ir/program.h"

namespace tessel::ir {

// `declared`: buffers the text uses without allocating them (the lowered
// IR's reduction scratch lives in the pass state, src/passes/state_text.h).
absl::StatusOr<Program> ParseProgram(std::string_view text,
                                     const std::vector<Buffer>& declared = {});

// One buffer declaration as the printer writes an allocation:
// "red_scratch = T.alloc_shared((32,), f32)".
absl::StatusOr<Buffer> ParseBufferDeclaration(std::string_view text);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_PARSER_H_
