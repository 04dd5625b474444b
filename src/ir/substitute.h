// Replaces variables by expressions in IR, folding what becomes constant.
//
//   ir::Stmt s2 = ir::Substitute(s, {{k.get(), k + 1}});
//   // (k + 1) % 3 with k = 2 gives the constant 0
#ifndef TESSEL_SRC_IR_SUBSTITUTE_H_
#define TESSEL_SRC_IR_SUBSTITUTE_H_

#include <unordered_map>

#include "src/ir/expr.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;

Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_SUBSTITUTE_H_
