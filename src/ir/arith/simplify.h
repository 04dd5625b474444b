// The algebra the IR's constructors apply to a binary node: constant
// folding, identities (x + 0, x * 1, x % 1), constants reassociated to the
// right ((x + 1) + 2 -> x + 3), differences of linear forms ((i + 1) - i ->
// 1), short-circuit logic.
//
//   ir::arith::SimplifyBinary(BinaryOp::kAdd, i + 1, 2);   // i + 3
#ifndef TESSEL_SRC_IR_ARITH_SIMPLIFY_H_
#define TESSEL_SRC_IR_ARITH_SIMPLIFY_H_

#include <optional>

#include "src/ir/expr.h"

namespace tessel::ir::arith {

// The simpler equivalent of `a op b` (operands already of one type), or
// nullopt when there is none and the node is built as written.
std::optional<Expr> SimplifyBinary(BinaryOp op, const Expr& a, const Expr& b);

// Floats folded exactly: f32 via double then rounded, f64 directly. Narrower
// floats are left to the interpreter, which knows their rounding.
bool FoldableFloat(DataType t);

}  // namespace tessel::ir::arith

#endif  // TESSEL_SRC_IR_ARITH_SIMPLIFY_H_
