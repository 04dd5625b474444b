#include "src/ir/op.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/ir/arith/simplify.h"
#include "src/ir/arith/wrapping.h"
#include "src/ir/buffer.h"
#include "src/ir/int_conversion.h"

namespace tessel::ir {
namespace {

// Order in which types win a promotion (higher wins).
int PromotionRank(DataType t) {
  switch (t) {
    case DataType::kBool:
      return 0;
    case DataType::kI8:
      return 1;
    case DataType::kU8:
      return 2;
    case DataType::kI16:
      return 3;
    case DataType::kI32:
      return 4;
    case DataType::kU32:
      return 5;
    case DataType::kI64:
      return 6;
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return 7;
    case DataType::kF16:
    case DataType::kBF16:
      return 8;
    case DataType::kF32:
      return 9;
    case DataType::kF64:
      return 10;
  }
  return 0;
}

bool IsImm(const Expr& e) {
  return e.As<IntImmNode>() != nullptr || e.As<FloatImmNode>() != nullptr;
}

double RoundToType(DataType t, double v) {
  return t == DataType::kF32 ? static_cast<double>(static_cast<float>(v)) : v;
}

Expr MakeBinaryNode(BinaryOp op, DataType operand_type, Expr a, Expr b) {
  DataType result =
      IsComparison(op) || IsLogical(op) ? DataType::kBool : operand_type;
  return Expr(
      std::make_shared<BinaryNode>(op, result, std::move(a), std::move(b)));
}

}  // namespace

Expr::Expr(int value) : Expr(IntImm(DataType::kI32, value)) {}
Expr::Expr(int64_t value) : Expr(IntImm(DataType::kI64, value)) {}
Expr::Expr(double value) : Expr(FloatImm(DataType::kF32, value)) {}

Var::Var(std::string name, DataType dtype)
    : node_(std::make_shared<VarNode>(std::move(name), dtype)) {}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kMin:
      return "min";
    case BinaryOp::kMax:
      return "max";
    case BinaryOp::kCeilDiv:
      return "ceildiv";
    case BinaryOp::kPow:
      return "pow";
    case BinaryOp::kEQ:
      return "==";
    case BinaryOp::kNE:
      return "!=";
    case BinaryOp::kLT:
      return "<";
    case BinaryOp::kLE:
      return "<=";
    case BinaryOp::kGT:
      return ">";
    case BinaryOp::kGE:
      return ">=";
    case BinaryOp::kAnd:
      return "&&";
    case BinaryOp::kOr:
      return "||";
    case BinaryOp::kBitAnd:
      return "&";
    case BinaryOp::kBitOr:
      return "|";
    case BinaryOp::kBitXor:
      return "^";
    case BinaryOp::kShl:
      return "<<";
    case BinaryOp::kShr:
      return ">>";
  }
  return "?";
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEQ || op == BinaryOp::kNE || op == BinaryOp::kLT ||
         op == BinaryOp::kLE || op == BinaryOp::kGT || op == BinaryOp::kGE;
}
bool IsLogical(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr;
}
bool IsBitwise(BinaryOp op) {
  return op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr ||
         op == BinaryOp::kBitXor || op == BinaryOp::kShl ||
         op == BinaryOp::kShr;
}

const char* MathOpName(MathOp op) {
  switch (op) {
    case MathOp::kExp:
      return "exp";
    case MathOp::kExp2:
      return "exp2";
    case MathOp::kLog:
      return "log";
    case MathOp::kLog2:
      return "log2";
    case MathOp::kSqrt:
      return "sqrt";
    case MathOp::kRsqrt:
      return "rsqrt";
    case MathOp::kAbs:
      return "abs";
    case MathOp::kTanh:
      return "tanh";
    case MathOp::kSigmoid:
      return "sigmoid";
    case MathOp::kSin:
      return "sin";
    case MathOp::kCos:
      return "cos";
    case MathOp::kFloor:
      return "floor";
    case MathOp::kCeil:
      return "ceil";
    case MathOp::kRound:
      return "round";
    case MathOp::kErf:
      return "erf";
  }
  return "?";
}

Expr IntImm(DataType dtype, int64_t value) {
  return Expr(std::make_shared<IntImmNode>(dtype, WrapInt(dtype, value)));
}

Expr FloatImm(DataType dtype, double value) {
  return Expr(std::make_shared<FloatImmNode>(dtype, RoundToType(dtype, value)));
}

Expr BoolImm(bool value) { return IntImm(DataType::kBool, value ? 1 : 0); }

Expr MakeConst(DataType dtype, double value) {
  if (is_float(dtype)) return FloatImm(dtype, value);
  return IntImm(dtype, static_cast<int64_t>(value));
}

Expr Zero(DataType dtype) { return MakeConst(dtype, 0); }
Expr One(DataType dtype) { return MakeConst(dtype, 1); }

DataType PromoteTypes(const Expr& a, const Expr& b) {
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return ta;
  bool ia = IsImm(a), ib = IsImm(b);
  // A constant adapts to the other side unless it would lose its kind
  // (a float constant next to an int expression makes the result float).
  if (ia != ib) {
    const Expr& imm = ia ? a : b;
    DataType other = ia ? tb : ta;
    if (!(is_float(imm.dtype()) && !is_float(other))) return other;
    return imm.dtype();
  }
  bool fa = is_float(ta), fb = is_float(tb);
  if (fa && fb && dtype_bits(ta) == dtype_bits(tb)) {
    return dtype_bits(ta) >= 32
               ? ta
               : DataType::kF32;  // f16 with bf16, e4m3 with e5m2
  }
  return PromotionRank(ta) >= PromotionRank(tb) ? ta : tb;
}

absl::Status CheckBinary(BinaryOp op, const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operator ", BinaryOpName(op), " on an undefined expression"));
  }
  DataType t = PromoteTypes(a, b);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("operator ", BinaryOpName(op), " on ",
                     std::string(dtype_name(a.dtype())), " and ",
                     std::string(dtype_name(b.dtype())), ": ", why));
  };
  if (IsLogical(op) &&
      !(a.dtype() == DataType::kBool && b.dtype() == DataType::kBool)) {
    return bad("logical operators take bool operands (compare first)");
  }
  if (IsBitwise(op) && is_float(t)) return bad("bit operations take integers");
  if ((op == BinaryOp::kMod || op == BinaryOp::kCeilDiv) && is_float(t)) {
    return bad("takes integers");
  }
  if (op == BinaryOp::kPow && !is_float(t)) return bad("pow takes floats");
  // An integer quotient by a constant 0: undefined on the GPU (the
  // interpreter would only say so once it ran).
  if ((op == BinaryOp::kDiv || op == BinaryOp::kMod ||
       op == BinaryOp::kCeilDiv) &&
      is_int(t)) {
    if (std::optional<int64_t> cb = AsConstInt(Cast(t, b)); cb && *cb == 0) {
      return bad("divides by a constant 0 (undefined on the GPU)");
    }
  }
  // The one signed quotient that does not fit its type: folding would wrap
  // it, the GPU's division is undefined there.
  if ((op == BinaryOp::kDiv || op == BinaryOp::kMod ||
       op == BinaryOp::kCeilDiv) &&
      is_signed_int(t)) {
    std::optional<int64_t> ca = AsConstInt(Cast(t, a));
    std::optional<int64_t> cb = AsConstInt(Cast(t, b));
    const int64_t lowest = dtype_bits(t) >= 64
                               ? std::numeric_limits<int64_t>::min()
                               : -(int64_t{1} << (dtype_bits(t) - 1));
    if (ca && cb && *ca == lowest && *cb == -1) {
      return bad(absl::StrCat(lowest, " ", BinaryOpName(op),
                              " -1 overflows (undefined on the GPU)"));
    }
  }
  // A constant shift past the width (or negative): undefined in C++ and on
  // the GPU; the interpreter would only say so once it ran.
  if ((op == BinaryOp::kShl || op == BinaryOp::kShr) && is_int(t)) {
    if (std::optional<int64_t> cb = AsConstInt(b);
        cb && (*cb < 0 || *cb >= dtype_bits(t))) {
      return bad(absl::StrCat("shifts by a constant ", *cb, ", outside [0, ",
                              dtype_bits(t), ") for ",
                              std::string(dtype_name(t))));
    }
  }
  if (!IsLogical(op) && !IsBitwise(op) && !IsComparison(op) &&
      t == DataType::kBool) {
    return bad("arithmetic on bool (cast first)");
  }
  return absl::OkStatus();
}

absl::Status CheckUnary(UnaryOp op, const Expr& a) {
  if (!a.defined())
    return absl::InvalidArgumentError(
        "unary operator on an undefined expression");
  DataType t = a.dtype();
  if (op == UnaryOp::kNot && t != DataType::kBool) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operator ! on ", std::string(dtype_name(t)), ": takes bool"));
  }
  if (op == UnaryOp::kBitNot && !is_int(t)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operator ~ on ", std::string(dtype_name(t)), ": takes integers"));
  }
  if (op == UnaryOp::kNeg && t == DataType::kBool) {
    return absl::InvalidArgumentError("operator - on bool");
  }
  return absl::OkStatus();
}

absl::Status CheckMath(MathOp op, const Expr& a) {
  if (!a.defined())
    return absl::InvalidArgumentError("math on an undefined expression");
  if (op == MathOp::kAbs ? is_bool(a.dtype()) : !is_float(a.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(MathOpName(op), " on ", std::string(dtype_name(a.dtype())),
                     ": takes floats (cast first)"));
  }
  return absl::OkStatus();
}

Expr Binary(BinaryOp op, Expr a, Expr b) {
  DataType t = PromoteTypes(a, b);
  a = Cast(t, std::move(a));
  b = Cast(t, std::move(b));
  if (std::optional<Expr> s = arith::SimplifyBinary(op, a, b)) return *s;
  return MakeBinaryNode(op, t, std::move(a), std::move(b));
}

Expr Unary(UnaryOp op, Expr a) {
  if (std::optional<int64_t> c = AsConstInt(a)) {
    switch (op) {
      case UnaryOp::kNeg:
        return IntImm(a.dtype(), arith::WrappingSub(0, *c));
      case UnaryOp::kNot:
        return BoolImm(*c == 0);
      case UnaryOp::kBitNot:
        return IntImm(a.dtype(), ~*c);
    }
  }
  if (const auto* f = a.As<FloatImmNode>();
      f != nullptr && op == UnaryOp::kNeg) {
    return FloatImm(a.dtype(), -f->value);
  }
  if (const auto* inner = a.As<UnaryNode>();
      inner != nullptr && inner->op == op) {
    return inner->a;  // --x, !!x, ~~x
  }
  return Expr(std::make_shared<UnaryNode>(op, std::move(a)));
}

Expr Select(Expr cond, Expr true_value, Expr false_value) {
  if (std::optional<int64_t> c = AsConstInt(cond)) {
    DataType t = PromoteTypes(true_value, false_value);
    return Cast(t, *c ? std::move(true_value) : std::move(false_value));
  }
  DataType t = PromoteTypes(true_value, false_value);
  return Expr(std::make_shared<SelectNode>(std::move(cond),
                                           Cast(t, std::move(true_value)),
                                           Cast(t, std::move(false_value))));
}

Expr Cast(DataType dtype, Expr value) {
  if (value.dtype() == dtype) return value;
  if (const auto* i = value.As<IntImmNode>()) {
    if (is_float(dtype)) return FloatImm(dtype, static_cast<double>(i->value));
    return IntImm(dtype, i->value);
  }
  if (const auto* f = value.As<FloatImmNode>()) {
    if (is_float(dtype)) {
      if (arith::FoldableFloat(dtype) ||
          dtype_bits(dtype) >= dtype_bits(value.dtype())) {
        return FloatImm(dtype, f->value);
      }
    } else if (dtype == DataType::kBool) {
      return BoolImm(f->value != 0);
    } else {
      // Truncates and saturates, as the interpreter and cvt.rzi do.
      return IntImm(dtype, FloatToInt(dtype, f->value));
    }
  }
  return Expr(std::make_shared<CastNode>(dtype, std::move(value)));
}

Expr Math(MathOp op, Expr a) {
  return Expr(std::make_shared<MathNode>(op, std::move(a)));
}

Expr Call(DataType dtype, std::string name, std::vector<Expr> args) {
  return Expr(
      std::make_shared<CallNode>(dtype, std::move(name), std::move(args)));
}

Expr Load(const Buffer& buffer, std::vector<Expr> indices) {
  return Expr(
      std::make_shared<LoadNode>(buffer->dtype, buffer, std::move(indices)));
}

Expr operator+(Expr a, Expr b) {
  return Binary(BinaryOp::kAdd, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return Binary(BinaryOp::kSub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return Binary(BinaryOp::kMul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return Binary(BinaryOp::kDiv, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return Binary(BinaryOp::kMod, std::move(a), std::move(b));
}
Expr operator==(Expr a, Expr b) {
  return Binary(BinaryOp::kEQ, std::move(a), std::move(b));
}
Expr operator!=(Expr a, Expr b) {
  return Binary(BinaryOp::kNE, std::move(a), std::move(b));
}
Expr operator<(Expr a, Expr b) {
  return Binary(BinaryOp::kLT, std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return Binary(BinaryOp::kLE, std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return Binary(BinaryOp::kGT, std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
  return Binary(BinaryOp::kGE, std::move(a), std::move(b));
}
Expr operator&&(Expr a, Expr b) {
  return Binary(BinaryOp::kAnd, std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  return Binary(BinaryOp::kOr, std::move(a), std::move(b));
}
Expr operator-(Expr a) { return Unary(UnaryOp::kNeg, std::move(a)); }
Expr operator!(Expr a) { return Unary(UnaryOp::kNot, std::move(a)); }

std::optional<int64_t> AsConstInt(const Expr& e) {
  if (const auto* i = e.As<IntImmNode>()) return i->value;
  return std::nullopt;
}

std::optional<double> AsConstFloat(const Expr& e) {
  if (const auto* f = e.As<FloatImmNode>()) return f->value;
  if (const auto* i = e.As<IntImmNode>()) return static_cast<double>(i->value);
  return std::nullopt;
}

bool IsConstInt(const Expr& e, int64_t value) {
  std::optional<int64_t> c = AsConstInt(e);
  return c && *c == value;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  if (b == -1) return arith::WrappingSub(0, a);  // INT64_MIN / -1 wraps, no UB
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace tessel::ir
