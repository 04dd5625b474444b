#include "src/ir/op.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
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

// Floats folded exactly: f32 via double then rounded, f64 directly. Narrower
// floats are left to the interpreter, which knows their rounding.
bool FoldableFloat(DataType t) {
  return t == DataType::kF32 || t == DataType::kF64;
}

double RoundToType(DataType t, double v) {
  return t == DataType::kF32 ? static_cast<double>(static_cast<float>(v)) : v;
}

int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
int64_t WrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
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
      return BoolImm(a == b);
    case BinaryOp::kNE:
      return BoolImm(a != b);
    case BinaryOp::kLT:
      return BoolImm(a < b);
    case BinaryOp::kLE:
      return BoolImm(a <= b);
    case BinaryOp::kGT:
      return BoolImm(a > b);
    case BinaryOp::kGE:
      return BoolImm(a >= b);
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
      return make(std::fmin(a, b));
    case BinaryOp::kMax:
      return make(std::fmax(a, b));
    case BinaryOp::kEQ:
      return BoolImm(a == b);
    case BinaryOp::kNE:
      return BoolImm(a != b);
    case BinaryOp::kLT:
      return BoolImm(a < b);
    case BinaryOp::kLE:
      return BoolImm(a <= b);
    case BinaryOp::kGT:
      return BoolImm(a > b);
    case BinaryOp::kGE:
      return BoolImm(a >= b);
    default:
      return std::nullopt;
  }
}

Expr MakeBinaryNode(BinaryOp op, DataType operand_type, Expr a, Expr b) {
  DataType result =
      IsComparison(op) || IsLogical(op) ? DataType::kBool : operand_type;
  return Expr(
      std::make_shared<BinaryNode>(op, result, std::move(a), std::move(b)));
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

// Linear form: sum of coeff * term + constant, terms compared structurally.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void AddTerm(const Expr& term, int64_t coeff) {
    for (auto& [t, c] : terms) {
      if (ExprDeepEqual(t, term)) {
        c = WrappingAdd(c, coeff);
        return;
      }
    }
    terms.emplace_back(term, coeff);
  }
};

void Linearize(const Expr& e, int64_t scale, LinearForm& out, int depth = 0) {
  if (std::optional<int64_t> c = AsConstInt(e)) {
    out.constant = WrappingAdd(out.constant, WrappingMul(scale, *c));
    return;
  }
  const auto* bin = e.As<BinaryNode>();
  if (bin != nullptr && depth < 64) {
    if (bin->op == BinaryOp::kAdd) {
      Linearize(bin->a, scale, out, depth + 1);
      Linearize(bin->b, scale, out, depth + 1);
      return;
    }
    if (bin->op == BinaryOp::kSub) {
      Linearize(bin->a, scale, out, depth + 1);
      Linearize(bin->b, WrappingSub(0, scale), out, depth + 1);
      return;
    }
    if (bin->op == BinaryOp::kMul) {
      if (std::optional<int64_t> c = AsConstInt(bin->b)) {
        Linearize(bin->a, WrappingMul(scale, *c), out, depth + 1);
        return;
      }
      if (std::optional<int64_t> c = AsConstInt(bin->a)) {
        Linearize(bin->b, WrappingMul(scale, *c), out, depth + 1);
        return;
      }
    }
  }
  if (const auto* un = e.As<UnaryNode>();
      un != nullptr && un->op == UnaryOp::kNeg) {
    Linearize(un->a, WrappingSub(0, scale), out, depth + 1);
    return;
  }
  out.AddTerm(e, scale);
}

bool VectorDeepEqual(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ExprDeepEqual(a[i], b[i])) return false;
  }
  return true;
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
  if (is_float(t)) {
    std::optional<double> ca = AsConstFloat(a), cb = AsConstFloat(b);
    if (ca && cb && FoldableFloat(t)) {
      if (std::optional<Expr> folded = FoldFloatBinary(op, t, *ca, *cb))
        return *folded;
    }
  } else {
    std::optional<int64_t> ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca && cb) {
      if (std::optional<Expr> folded = FoldIntBinary(op, t, *ca, *cb))
        return *folded;
    }
    if (IsLogical(op)) {
      if (std::optional<Expr> s = SimplifyLogical(op, a, b)) return *s;
    } else if (is_int(t)) {
      if (std::optional<Expr> s = SimplifyInt(op, a, b)) return *s;
    }
  }
  return MakeBinaryNode(op, t, std::move(a), std::move(b));
}

Expr Unary(UnaryOp op, Expr a) {
  if (std::optional<int64_t> c = AsConstInt(a)) {
    switch (op) {
      case UnaryOp::kNeg:
        return IntImm(a.dtype(), WrappingSub(0, *c));
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
      if (FoldableFloat(dtype) ||
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

std::optional<int64_t> ConstDifference(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined() || is_float(a.dtype()) ||
      is_float(b.dtype())) {
    return std::nullopt;
  }
  LinearForm form;
  Linearize(a, 1, form);
  Linearize(b, -1, form);
  for (const auto& [term, coeff] : form.terms) {
    if (coeff != 0) return std::nullopt;
  }
  return form.constant;
}

bool ExprDeepEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::kIntImm:
      return a.As<IntImmNode>()->value == b.As<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.As<FloatImmNode>()->value, y = b.As<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::kVar:
      return false;  // identity only, checked above
    case ExprKind::kBinary: {
      const auto *x = a.As<BinaryNode>(), *y = b.As<BinaryNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a) &&
             ExprDeepEqual(x->b, y->b);
    }
    case ExprKind::kUnary: {
      const auto *x = a.As<UnaryNode>(), *y = b.As<UnaryNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a);
    }
    case ExprKind::kSelect: {
      const auto *x = a.As<SelectNode>(), *y = b.As<SelectNode>();
      return ExprDeepEqual(x->cond, y->cond) &&
             ExprDeepEqual(x->true_value, y->true_value) &&
             ExprDeepEqual(x->false_value, y->false_value);
    }
    case ExprKind::kCast:
      return ExprDeepEqual(a.As<CastNode>()->value, b.As<CastNode>()->value);
    case ExprKind::kMath: {
      const auto *x = a.As<MathNode>(), *y = b.As<MathNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a);
    }
    case ExprKind::kCall: {
      const auto *x = a.As<CallNode>(), *y = b.As<CallNode>();
      return x->name == y->name && VectorDeepEqual(x->args, y->args);
    }
    case ExprKind::kLoad: {
      const auto *x = a.As<LoadNode>(), *y = b.As<LoadNode>();
      return x->buffer.same_as(y->buffer) &&
             VectorDeepEqual(x->indices, y->indices);
    }
  }
  return false;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  if (b == -1) return WrappingSub(0, a);  // INT64_MIN / -1 wraps, no UB
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
