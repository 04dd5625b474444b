#include "src/ir/tile_op_rules.h"

#include <cmath>
#include <limits>

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

namespace {

// The integer range of `t` (u64's highest wraps to all ones in IntImm).
int64_t LowestInt(DataType t) {
  if (!is_signed_int(t) || t == DataType::kBool) return 0;
  const int bits = dtype_bits(t);
  return bits >= 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t{1} << (bits - 1));
}
int64_t HighestInt(DataType t) {
  if (t == DataType::kBool) return 1;
  const int bits = dtype_bits(t);
  if (is_signed_int(t)) {
    return bits >= 64 ? std::numeric_limits<int64_t>::max()
                      : (int64_t{1} << (bits - 1)) - 1;
  }
  return bits >= 64 ? -1 : (int64_t{1} << bits) - 1;
}

}  // namespace

Expr ReduceIdentity(ReduceKind kind, DataType t) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum:
    case ReduceKind::kAbsMax:  // |x| >= 0
      return Zero(t);
    case ReduceKind::kMax:
      return is_float(t) ? FloatImm(t, -INFINITY) : IntImm(t, LowestInt(t));
    case ReduceKind::kMin:
      return is_float(t) ? FloatImm(t, INFINITY) : IntImm(t, HighestInt(t));
  }
  return Zero(t);
}

double MinNum(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;  // -0 before +0
  return a < b ? a : b;
}

double MaxNum(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;  // +0 after -0
  return a > b ? a : b;
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
