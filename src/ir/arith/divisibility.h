// What provably divides an index expression: the vectorizer's question
// ("may this copy use 16-byte accesses?").
//
//   ir::arith::KnownDivisor(by * 128 + tx * 8);   // 8
#ifndef TESSEL_SRC_IR_ARITH_DIVISIBILITY_H_
#define TESSEL_SRC_IR_ARITH_DIVISIBILITY_H_

#include <cstdint>

#include "src/ir/expr.h"

namespace tessel::ir::arith {

// The largest power-of-two-times-constant that provably divides e (1 when
// nothing is known). Variables count as 1; 0 is divided by everything
// (2^30 stands for that).
int64_t KnownDivisor(const Expr& e);

}  // namespace tessel::ir::arith

#endif  // TESSEL_SRC_IR_ARITH_DIVISIBILITY_H_
