// Index expressions as linear forms (sums of constant multiples of terms),
// to tell whether two differ by a constant.
//
//   ir::ConstDifference((i + 1) * 64, i * 64);   // 64
#ifndef TESSEL_SRC_IR_ARITH_LINEAR_H_
#define TESSEL_SRC_IR_ARITH_LINEAR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "src/ir/expr.h"

namespace tessel::ir {

// a - b when it is a constant, found by comparing the linear forms of a and
// b; terms compare with ExprDeepEqual. nullopt for floats.
std::optional<int64_t> ConstDifference(const Expr& a, const Expr& b);

// e - base as a sum of constant multiples of `vars` plus a constant, when it
// is one (every other term cancels); nullopt otherwise or for floats.
//
//   ir::OffsetIn(((r + i) * 64) + j, r * 64, {i, j});   // i * 64 + j
std::optional<Expr> OffsetIn(const Expr& e, const Expr& base,
                             const std::vector<const VarNode*>& vars);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_ARITH_LINEAR_H_
