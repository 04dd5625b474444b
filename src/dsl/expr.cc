// tessel::Expr: the public expression handle over ir::Expr.
#include "tessel/expr.h"

#include <cmath>
#include <limits>

#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel {
namespace {

using dsl::Access;

Expr Wrap(const ir::Expr& e) { return Access::FromIr(e); }
ir::Expr Unwrap(const Expr& e) { return Access::ToIr(e); }

// t, or f32 in place of a dtype that is no DataType (reported).
DataType ValidDtype(DataType t, const char* op) {
  if (dtype_valid(t)) return t;
  dsl::BuilderState::ReportExprError(std::string(op) + ": " +
                                     dsl::BuilderState::InvalidDtype(t));
  return DataType::kF32;
}

// A placeholder that keeps recording going after a reported mistake.
Expr Placeholder(const ir::Expr& a, const ir::Expr& b = ir::Expr()) {
  DataType t = a.defined()   ? a.dtype()
               : b.defined() ? b.dtype()
                             : DataType::kI32;
  return Wrap(ir::Zero(t == DataType::kBool ? DataType::kI32 : t));
}

Expr BinaryOf(ir::BinaryOp op, const Expr& a, const Expr& b) {
  ir::Expr x = Unwrap(a), y = Unwrap(b);
  if (absl::Status s = ir::CheckBinary(op, x, y); !s.ok()) {
    dsl::BuilderState::ReportExprError(std::string(s.message()));
    return Placeholder(x, y);
  }
  return Wrap(ir::Binary(op, x, y));
}

Expr UnaryOf(ir::UnaryOp op, const Expr& a) {
  ir::Expr x = Unwrap(a);
  if (absl::Status s = ir::CheckUnary(op, x); !s.ok()) {
    dsl::BuilderState::ReportExprError(std::string(s.message()));
    return Placeholder(x);
  }
  return Wrap(ir::Unary(op, x));
}

Expr MathOf(ir::MathOp op, const Expr& a) {
  ir::Expr x = Unwrap(a);
  if (absl::Status s = ir::CheckMath(op, x); !s.ok()) {
    dsl::BuilderState::ReportExprError(std::string(s.message()));
    return Placeholder(x);
  }
  return Wrap(ir::Math(op, x));
}

}  // namespace

Expr Expr::FromInt(int64_t value) {
  bool fits = value >= std::numeric_limits<int32_t>::min() &&
              value <= std::numeric_limits<int32_t>::max();
  return Wrap(ir::IntImm(fits ? DataType::kI32 : DataType::kI64, value));
}
Expr Expr::FromBool(bool value) { return Wrap(ir::BoolImm(value)); }
Expr Expr::FromFloat(double value) {
  return Wrap(ir::FloatImm(DataType::kF32, value));
}

DataType Expr::dtype() const {
  return node_ ? Unwrap(*this).dtype() : DataType::kI32;
}
std::string Expr::to_string() const { return ir::ToString(Unwrap(*this)); }

Expr operator+(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kAdd, a, b);
}
Expr operator-(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kSub, a, b);
}
Expr operator*(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kMul, a, b);
}
Expr operator/(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kDiv, a, b);
}
Expr operator%(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kMod, a, b);
}
Expr operator==(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kEQ, a, b);
}
Expr operator!=(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kNE, a, b);
}
Expr operator<(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kLT, a, b);
}
Expr operator<=(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kLE, a, b);
}
Expr operator>(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kGT, a, b);
}
Expr operator>=(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kGE, a, b);
}
Expr operator&&(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kAnd, a, b);
}
Expr operator||(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kOr, a, b);
}
Expr operator&(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kBitAnd, a, b);
}
Expr operator|(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kBitOr, a, b);
}
Expr operator^(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kBitXor, a, b);
}
Expr operator<<(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kShl, a, b);
}
Expr operator>>(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kShr, a, b);
}
Expr operator-(const Expr& a) { return UnaryOf(ir::UnaryOp::kNeg, a); }
Expr operator!(const Expr& a) { return UnaryOf(ir::UnaryOp::kNot, a); }
Expr operator~(const Expr& a) { return UnaryOf(ir::UnaryOp::kBitNot, a); }

Expr min(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kMin, a, b);
}
Expr max(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kMax, a, b);
}
Expr ceildiv(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kCeilDiv, a, b);
}
Expr pow(const Expr& a, const Expr& b) {
  return BinaryOf(ir::BinaryOp::kPow, a, b);
}

Expr select(const Expr& cond, const Expr& true_value, const Expr& false_value) {
  ir::Expr c = Unwrap(cond), t = Unwrap(true_value), f = Unwrap(false_value);
  if (!c.defined() || !t.defined() || !f.defined()) {
    dsl::BuilderState::ReportExprError("select of an undefined expression");
    return Placeholder(t, f);
  }
  if (c.dtype() != DataType::kBool) {
    dsl::BuilderState::ReportExprError(
        "select: the condition must be bool (a comparison), got " +
        std::string(dtype_name(c.dtype())));
    return Placeholder(t, f);
  }
  return Wrap(ir::Select(c, t, f));
}

Expr cast(const Expr& value, DataType dtype) {
  dtype = ValidDtype(dtype, "cast");
  ir::Expr v = Unwrap(value);
  if (!v.defined()) {
    dsl::BuilderState::ReportExprError("cast of an undefined expression");
    return Wrap(ir::Zero(dtype));
  }
  return Wrap(ir::Cast(dtype, v));
}

Expr exp(const Expr& x) { return MathOf(ir::MathOp::kExp, x); }
Expr exp2(const Expr& x) { return MathOf(ir::MathOp::kExp2, x); }
Expr log(const Expr& x) { return MathOf(ir::MathOp::kLog, x); }
Expr log2(const Expr& x) { return MathOf(ir::MathOp::kLog2, x); }
Expr sqrt(const Expr& x) { return MathOf(ir::MathOp::kSqrt, x); }
Expr rsqrt(const Expr& x) { return MathOf(ir::MathOp::kRsqrt, x); }
Expr abs(const Expr& x) { return MathOf(ir::MathOp::kAbs, x); }
Expr tanh(const Expr& x) { return MathOf(ir::MathOp::kTanh, x); }
Expr sigmoid(const Expr& x) { return MathOf(ir::MathOp::kSigmoid, x); }
Expr sin(const Expr& x) { return MathOf(ir::MathOp::kSin, x); }
Expr cos(const Expr& x) { return MathOf(ir::MathOp::kCos, x); }
Expr floor(const Expr& x) { return MathOf(ir::MathOp::kFloor, x); }
Expr ceil(const Expr& x) { return MathOf(ir::MathOp::kCeil, x); }
Expr round(const Expr& x) { return MathOf(ir::MathOp::kRound, x); }
Expr erf(const Expr& x) { return MathOf(ir::MathOp::kErf, x); }

Expr constant(double value, DataType dtype) {
  dtype = ValidDtype(dtype, "constant");
  return Wrap(ir::MakeConst(dtype, value));
}

Expr infinity(DataType dtype) {
  dtype = ValidDtype(dtype, "infinity");
  if (!is_float(dtype)) {
    dsl::BuilderState::ReportExprError("infinity of a non-float type " +
                                       std::string(dtype_name(dtype)));
    return Wrap(ir::Zero(dtype));
  }
  return Wrap(ir::FloatImm(dtype, std::numeric_limits<double>::infinity()));
}

namespace {
double MaxFinite(DataType t) {
  switch (t) {
    case DataType::kF16:
      return 65504.0;
    case DataType::kBF16:
      return 3.3895313892515355e38;
    case DataType::kF32:
      return std::numeric_limits<float>::max();
    case DataType::kF64:
      return std::numeric_limits<double>::max();
    case DataType::kF8E4M3:
      return 448.0;
    case DataType::kF8E5M2:
      return 57344.0;
    default:
      return 0;
  }
}
}  // namespace

Expr max_value(DataType dtype) {
  dtype = ValidDtype(dtype, "max_value");
  if (is_float(dtype)) return Wrap(ir::FloatImm(dtype, MaxFinite(dtype)));
  if (dtype == DataType::kBool) return Wrap(ir::BoolImm(true));
  int bits = dtype_bits(dtype);
  int64_t v = is_signed_int(dtype)
                  ? (bits == 64 ? std::numeric_limits<int64_t>::max()
                                : (int64_t{1} << (bits - 1)) - 1)
                  : (int64_t{1} << bits) - 1;
  return Wrap(ir::IntImm(dtype, v));
}

Expr min_value(DataType dtype) {
  dtype = ValidDtype(dtype, "min_value");
  if (is_float(dtype)) return Wrap(ir::FloatImm(dtype, -MaxFinite(dtype)));
  if (dtype == DataType::kBool) return Wrap(ir::BoolImm(false));
  int bits = dtype_bits(dtype);
  int64_t v = is_signed_int(dtype)
                  ? (bits == 64 ? std::numeric_limits<int64_t>::min()
                                : -(int64_t{1} << (bits - 1)))
                  : 0;
  return Wrap(ir::IntImm(dtype, v));
}

}  // namespace tessel
