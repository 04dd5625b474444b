// Structural equality of two expressions: the one the simplifier, the
// verifier and the passes use ("is this the same index?").
//
//   ir::ExprDeepEqual(i * 64 + 1, i * 64 + 1);   // true: same tree, same i
//
// Variables and buffers compare by identity. Programs compare with
// ir::StructuralEqual (src/ir/structural.h), which also maps the variables
// each side binds.
#ifndef TESSEL_SRC_IR_ARITH_EQUAL_H_
#define TESSEL_SRC_IR_ARITH_EQUAL_H_

#include <vector>

#include "src/ir/expr.h"

namespace tessel::ir {

bool ExprDeepEqual(const Expr& a, const Expr& b);
bool ExprsDeepEqual(const std::vector<Expr>& a, const std::vector<Expr>& b);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_ARITH_EQUAL_H_
