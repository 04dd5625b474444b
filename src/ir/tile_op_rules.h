// What the reduce and atomic tile ops mean, once for the verifier, the
// interpreter and the lowering: which binary op a reduction combines with,
// its identity, whether it takes |x| first, and the element types an
// atomic op accepts.
//
//   ir::ReduceCombiner(ReduceKind::kAbsMax);      // BinaryOp::kMax
//   ir::ReduceIdentity(ReduceKind::kMax, kF32);   // -inf
//   ir::AtomicDtypeAllowed(AtomicOp::kMax, kF16); // false: add only
#ifndef TESSEL_SRC_IR_TILE_OP_RULES_H_
#define TESSEL_SRC_IR_TILE_OP_RULES_H_

#include "src/ir/expr.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

// kAdd for the sums, kMax / kMin for the extrema.
BinaryOp ReduceCombiner(ReduceKind kind);
// kAbsSum and kAbsMax reduce |x|.
bool ReduceTakesAbs(ReduceKind kind);
// The value a partial reduction starts from: 0 for the sums and kAbsMax,
// -inf / +inf for max / min (the ends of the dtype's range for integers).
Expr ReduceIdentity(ReduceKind kind, DataType t);

// The one order of float min / max (IEEE 754-2019 minimumNumber /
// maximumNumber: a NaN operand is ignored, -0 < +0), for constant folding
// and the interpreter; the device's fminf / fmaxf are the same order.
double MinNum(double a, double b);
double MaxNum(double a, double b);

// The element types the hardware's atomics take: every op on f32, i32, u32
// and i64; add only on f16, bf16 and f64.
bool AtomicDtypeAllowed(AtomicOp op, DataType t);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_TILE_OP_RULES_H_
