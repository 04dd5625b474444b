// What the value of an integer index expression can be.
//
//   ir::arith::ProvablyNonNegative(by * 128 + tx);   // true
#ifndef TESSEL_SRC_IR_ARITH_BOUNDS_H_
#define TESSEL_SRC_IR_ARITH_BOUNDS_H_

#include "src/ir/expr.h"

namespace tessel::ir::arith {

// Whether e is provably >= 0, given that every variable is (block and thread
// indices, loop variables of loops starting at >= 0, sizes).
bool ProvablyNonNegative(const Expr& e);

}  // namespace tessel::ir::arith

#endif  // TESSEL_SRC_IR_ARITH_BOUNDS_H_
