// Block-uniform scalars (T::let): one statement binds a variable to a value
// that every thread of the block computes alike, for the rest of the
// statement list around it.
//
//   ir::Stmt s = ir::MakeLet(page, ir::Load(block_table, {b, k}), loc);
//   // prints T.evaluate(T.call_intrin(i32, "let", page, block_table[b, k]))
//   ir::LetValues lets = ir::CollectLets(kernel_body);
//   ir::Expr start = ir::InlineLets(copy_start, lets);  // page -> its value
//
// The lowered IR uses the same statement for its own names (the thread
// index, descriptors), so the printer, the parser, the structural hash and
// both code generators know it already: the CUDA backend declares one
// `const` register per thread, which is uniform by construction since every
// thread evaluates the same uniform value (no shared-memory slot, no
// barrier, nothing to race); the PTX backend keeps it in a register.
#ifndef TESSEL_SRC_IR_LET_H_
#define TESSEL_SRC_IR_LET_H_

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "src/ir/expr.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

// The intrinsic's name in Call nodes.
inline constexpr char kLetName[] = "let";

Stmt MakeLet(const Var& var, Expr value, SourceLoc loc);

// The let a statement is, if it is one.
struct LetParts {
  const VarNode* var;
  Expr value;
};
std::optional<LetParts> AsLet(const Stmt& s);
std::optional<LetParts> AsLetCall(const Expr& evaluated);

// Every let in s: its variable -> its value with the lets it reads
// inlined, so that the value stands alone wherever the variable is in
// scope.
using LetValues = std::unordered_map<const VarNode*, Expr>;
LetValues CollectLets(const Stmt& s);

// e with every let variable of `lets` replaced by its value.
Expr InlineLets(const Expr& e, const LetValues& lets);

// Why a value may differ between the threads of a block, or nullopt when
// it is block-uniform: a load of a per-thread buffer (local, var,
// fragment), a loop index in `per_thread` (Parallel loops), an intrinsic
// call. Globals, shared tiles, block indices, symbolic dims, serial loop
// indices and other lets are uniform.
std::optional<std::string> PerThreadReason(
    const Expr& e, const std::unordered_set<const VarNode*>& per_thread);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_LET_H_
