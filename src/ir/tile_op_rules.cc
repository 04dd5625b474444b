#include "src/ir/tile_op_rules.h"

#include <cmath>

#include "src/ir/op.h"

namespace tessel::ir {

BinaryOp ReduceCombiner(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum:
      return BinaryOp::kAdd;
    case ReduceKind::kMax:
    case ReduceKind::kAbsMax:
      return BinaryOp::kMax;
    case ReduceKind::kMin:
      return BinaryOp::kMin;
  }
  return BinaryOp::kAdd;
}

bool ReduceTakesAbs(ReduceKind kind) {
  return kind == ReduceKind::kAbsSum || kind == ReduceKind::kAbsMax;
}

Expr ReduceIdentity(ReduceKind kind, DataType t) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum:
    case ReduceKind::kAbsMax:  // |x| >= 0
      return Zero(t);
    case ReduceKind::kMax:
      return is_float(t) ? FloatImm(t, -INFINITY) : MakeConst(t, -2147483648.0);
    case ReduceKind::kMin:
      return is_float(t) ? FloatImm(t, INFINITY) : MakeConst(t, 2147483647.0);
  }
  return Zero(t);
}

bool AtomicDtypeAllowed(AtomicOp op, DataType t) {
  switch (t) {
    case DataType::kF32:
    case DataType::kI32:
    case DataType::kU32:
    case DataType::kI64:
      return true;
    case DataType::kF16:
    case DataType::kBF16:
    case DataType::kF64:
      return op == AtomicOp::kAdd;
    default:
      return false;
  }
}

}  // namespace tessel::ir
