// The nesting depth finish() accepts. Every later stage (verifier, printer,
// structural hash, passes, codegen, interpreter, NVRTC) walks the IR by
// recursion, so user input that nests without bound would overflow the
// stack; finish() refuses it first, naming the user's line.
//
//   if (absl::Status s = dsl::CheckDepth(program, loc); !s.ok()) ...
//   // "model.cc:42: store to y: expression nested 257 deep; tessel takes
//   //  at most 256 ..."
#ifndef TESSEL_SRC_DSL_DEPTH_LIMIT_H_
#define TESSEL_SRC_DSL_DEPTH_LIMIT_H_

#include "absl/status/status.h"
#include "src/ir/program.h"

namespace tessel::dsl {

// Operators between an expression's root and its deepest leaf.
inline constexpr int kMaxExprDepth = 256;
// Statements inside statements (loops, ifs, and each allocation, which
// holds the rest of its scope).
inline constexpr int kMaxStmtDepth = 256;

// InvalidArgument at the statement holding the first expression too deep
// (or the first statement too deep; a tensor shape too deep is reported at
// `builder_loc`). The walk itself recurses at most to the limits.
absl::Status CheckDepth(const ir::Program& program,
                        const ir::SourceLoc& builder_loc);

}  // namespace tessel::dsl

#endif  // TESSEL_SRC_DSL_DEPTH_LIMIT_H_
