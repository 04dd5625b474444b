#include "src/ir/arith/simplify.h"

#include <algorithm>
#include <cmath>

#include "src/ir/arith/equal.h"
#include "src/ir/arith/linear.h"
#include "src/ir/arith/wrapping.h"
#include "src/ir/op.h"
#include "src/ir/tile_op_rules.h"

namespace tessel::ir::arith {
namespace {

// A comparison of two constants (op is one of == != < <= > >=).
template <typename T>
bool Compare(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::kEQ:
      return a == b;
    case BinaryOp::kNE:
      return a != b;
    case BinaryOp::kLT:
      return a < b;
    case BinaryOp::kLE:
      return a <= b;
    case BinaryOp::kGT:
      return a > b;
    default:
      return a >= b;
  }
}

std::optional<Expr> FoldIntBinary(BinaryOp op, DataType t, int64_t a,
                                  int64_t b) {
  auto make = [&](int64_t v) { return IntImm(t, v); };
  switch (op) {
    case BinaryOp::kAdd:
      return make(WrappingAdd(a, b));
    case BinaryOp::kSub:
      return make(WrappingSub(a, b));
    case BinaryOp::kMul:
      return make(WrappingMul(a, b));
    case BinaryOp::kDiv:
      if (b == 0) return std::nullopt;
      return make(FloorDiv(a, b));
    case BinaryOp::kMod:
      if (b == 0) return std::nullopt;
      return make(FloorMod(a, b));
    case BinaryOp::kCeilDiv:
      if (b == 0) return std::nullopt;
      // -x wraps as the interpreter's does (no signed overflow here).
      return make(WrappingSub(0, FloorDiv(WrappingSub(0, a), b)));
    case BinaryOp::kMin:
      return make(std::min(a, b));
    case BinaryOp::kMax:
      return make(std::max(a, b));
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE:
      return BoolImm(Compare(op, a, b));
    case BinaryOp::kAnd:
      return BoolImm(a && b);
    case BinaryOp::kOr:
      return BoolImm(a || b);
    case BinaryOp::kBitAnd:
      return make(a & b);
    case BinaryOp::kBitOr:
      return make(a | b);
    case BinaryOp::kBitXor:
      return make(a ^ b);
    case BinaryOp::kShl:
      if (b < 0 || b >= dtype_bits(t)) return std::nullopt;
      return make(static_cast<int64_t>(static_cast<uint64_t>(a) << b));
    case BinaryOp::kShr:
      if (b < 0 || b >= dtype_bits(t)) return std::nullopt;
      return make(a >> b);
    case BinaryOp::kPow:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Expr> FoldFloatBinary(BinaryOp op, DataType t, double a,
                                    double b) {
  auto make = [&](double v) { return FloatImm(t, v); };
  switch (op) {
    case BinaryOp::kAdd:
      return make(a + b);
    case BinaryOp::kSub:
      return make(a - b);
    case BinaryOp::kMul:
      return make(a * b);
    case BinaryOp::kDiv:
      return make(a / b);
    case BinaryOp::kMin:
      return make(MinNum(a, b));
    case BinaryOp::kMax:
      return make(MaxNum(a, b));
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE:
      return BoolImm(Compare(op, a, b));
    default:
      return std::nullopt;
  }
}

// x op c where the left operand is itself `y op c2`: reassociate constants.
std::optional<Expr> ReassociateConst(BinaryOp op, const Expr& a, int64_t c) {
  const auto* inner = a.As<BinaryNode>();
  if (inner == nullptr) return std::nullopt;
  std::optional<int64_t> c2 = AsConstInt(inner->b);
  if (!c2) return std::nullopt;
  if (op == BinaryOp::kAdd && inner->op == BinaryOp::kAdd) {
    return inner->a + IntImm(a.dtype(), WrappingAdd(*c2, c));
  }
  if (op == BinaryOp::kAdd && inner->op == BinaryOp::kSub) {
    return inner->a + IntImm(a.dtype(), WrappingSub(c, *c2));
  }
  if (op == BinaryOp::kMul && inner->op == BinaryOp::kMul) {
    return inner->a * IntImm(a.dtype(), WrappingMul(*c2, c));
  }
  if (op == BinaryOp::kDiv && inner->op == BinaryOp::kMul && c > 0 && *c2 > 0 &&
      *c2 % c == 0) {
    return inner->a * IntImm(a.dtype(), *c2 / c);
  }
  if (op == BinaryOp::kMod && inner->op == BinaryOp::kMul && c > 0 &&
      *c2 % c == 0) {
    return IntImm(a.dtype(), 0);
  }
  if (op == BinaryOp::kDiv && inner->op == BinaryOp::kDiv && c > 0 && *c2 > 0) {
    return Binary(BinaryOp::kDiv, inner->a,
                  IntImm(a.dtype(), WrappingMul(*c2, c)));
  }
  return std::nullopt;
}

std::optional<Expr> SimplifyInt(BinaryOp op, const Expr& a, const Expr& b) {
  std::optional<int64_t> ca = AsConstInt(a), cb = AsConstInt(b);
  DataType t = a.dtype();
  switch (op) {
    case BinaryOp::kAdd:
      if (ca && !cb) return b + a;  // constants go right
      if (cb && *cb == 0) return a;
      if (cb) return ReassociateConst(op, a, *cb);
      return std::nullopt;
    case BinaryOp::kSub:
      if (cb && *cb == 0) return a;
      if (cb) return ReassociateConst(BinaryOp::kAdd, a, WrappingSub(0, *cb));
      if (std::optional<int64_t> d = ConstDifference(a, b))
        return IntImm(t, *d);
      return std::nullopt;
    case BinaryOp::kMul:
      if (ca && !cb) return b * a;
      if (cb && *cb == 1) return a;
      if (cb && *cb == 0) return IntImm(t, 0);
      if (cb) return ReassociateConst(op, a, *cb);
      return std::nullopt;
    case BinaryOp::kDiv:
      if (cb && *cb == 1) return a;
      if (ca && *ca == 0 && cb && *cb != 0) return IntImm(t, 0);
      if (cb) return ReassociateConst(op, a, *cb);
      return std::nullopt;
    case BinaryOp::kMod:
      if (cb && *cb == 1) return IntImm(t, 0);
      if (cb) return ReassociateConst(op, a, *cb);
      return std::nullopt;
    case BinaryOp::kCeilDiv:
      if (cb && *cb == 1) return a;
      return std::nullopt;
    case BinaryOp::kMin:
    case BinaryOp::kMax:
      if (ExprDeepEqual(a, b)) return a;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<Expr> SimplifyLogical(BinaryOp op, const Expr& a, const Expr& b) {
  std::optional<int64_t> ca = AsConstInt(a), cb = AsConstInt(b);
  if (op == BinaryOp::kAnd) {
    if (ca) return *ca ? b : BoolImm(false);
    if (cb) return *cb ? a : BoolImm(false);
  } else if (op == BinaryOp::kOr) {
    if (ca) return *ca ? BoolImm(true) : b;
    if (cb) return *cb ? BoolImm(true) : a;
  }
  return std::nullopt;
}

}  // namespace

bool FoldableFloat(DataType t) {
  return t == DataType::kF32 || t == DataType::kF64;
}

std::optional<Expr> SimplifyBinary(BinaryOp op, const Expr& a, const Expr& b) {
  const DataType t = a.dtype();
  if (is_float(t)) {
    std::optional<double> ca = AsConstFloat(a), cb = AsConstFloat(b);
    if (ca && cb && FoldableFloat(t)) return FoldFloatBinary(op, t, *ca, *cb);
    return std::nullopt;
  }
  std::optional<int64_t> ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) {
    if (std::optional<Expr> folded = FoldIntBinary(op, t, *ca, *cb))
      return folded;
  }
  if (IsLogical(op)) return SimplifyLogical(op, a, b);
  if (is_int(t)) return SimplifyInt(op, a, b);
  return std::nullopt;
}

}  // namespace tessel::ir::arith
