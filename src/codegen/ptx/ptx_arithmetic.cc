// Binary arithmetic as PTX: constants folded, C++'s semantics as the CUDA
// printer's code has them (floor division of ints by shifts, masks or one
// division; f32 division rounded as division, by a power of two as a
// product; fmaxf's NaN rule for max; a * b + c contracted into an fma).
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/ir/arith/bounds.h"

namespace tessel::codegen::ptx {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// a & c, a | c, a ^ c (bools and integers alike); nullopt for other ops.
std::optional<int64_t> FoldBitwise(ir::BinaryOp op, int64_t a, int64_t c) {
  switch (op) {
    case ir::BinaryOp::kBitAnd:
      return a & c;
    case ir::BinaryOp::kBitOr:
      return a | c;
    case ir::BinaryOp::kBitXor:
      return a ^ c;
    default:
      return std::nullopt;
  }
}

const char* Compare(ir::BinaryOp op, bool is_float) {
  switch (op) {
    case ir::BinaryOp::kEQ:
      return "eq";
    case ir::BinaryOp::kNE:
      return is_float ? "neu" : "ne";
    case ir::BinaryOp::kLT:
      return "lt";
    case ir::BinaryOp::kLE:
      return "le";
    case ir::BinaryOp::kGT:
      return "gt";
    default:
      return "ge";
  }
}

}  // namespace

// a * b + c (and its differences) as one fma.rn.f32, as NVVM contracts
// them (CUDA's default -fmad=true); nullopt where there is no product or
// it folds to a constant.
std::optional<Value> Emitter::Contracted(const ir::BinaryNode& b) {
  using ir::BinaryOp;
  if (b.a.dtype() != DataType::kF32 ||
      (b.op != BinaryOp::kAdd && b.op != BinaryOp::kSub)) {
    return std::nullopt;
  }
  auto product = [](const ir::Expr& e) {
    const auto* m = e.As<ir::BinaryNode>();
    return m != nullptr && m->op == BinaryOp::kMul ? m : nullptr;
  };
  auto negated = [&](const Value& v) {
    if (v.float_const)
      return Value{.dtype = v.dtype, .float_const = -*v.float_const};
    return Emit(DataType::kF32, "neg.f32", {v});
  };
  const ir::BinaryNode* m = product(b.a);
  const bool left = m != nullptr;
  if (!left) m = product(b.b);
  if (m == nullptr) return std::nullopt;
  const ir::BinaryNode* mb = m;
  Value p = Expr(mb->a), q = Expr(mb->b);
  if (p.is_const() && q.is_const()) return std::nullopt;
  Value c = Expr(left ? b.b : b.a);
  if (left && b.op == BinaryOp::kSub) c = negated(c);   // p q - c
  if (!left && b.op == BinaryOp::kSub) p = negated(p);  // c - p q
  return Emit(DataType::kF32, "fma.rn.f32", {p, q, c});
}

// ptxas divides by an immediate the long way (a reciprocal on the MUFU unit
// and fixes); NVVM multiplies by a magic number, and so do we. With l =
// ceil(log2 d) and m = ceil(2^(31 + l) / d) (< 2^32 unless d is a power of
// two), m d - 2^(31 + l) < d <= 2^l, so x m / 2^(31 + l) rounds down to
// x / d for every 0 <= x < 2^31 (Granlund and Montgomery, 1994).
DivisionMagic MagicForDivisionBy(int64_t d) {
  const int l = std::bit_width(static_cast<uint64_t>(d - 1));
  const uint64_t m = ((uint64_t{1} << (31 + l)) + d - 1) / d;
  return {static_cast<uint32_t>(m), l - 1};
}

Value Emitter::DivideByConstant(const Value& x, int64_t d) {
  const DivisionMagic magic = MagicForDivisionBy(d);
  const Value hi = Emit(DataType::kI32, "mul.hi.u32",
                        {x, Const(DataType::kU32, magic.magic)});
  return Emit(DataType::kI32, "shr.u32",
              {hi, Const(DataType::kU32, magic.shift)});
}

Value Emitter::Binary(const ir::BinaryNode& b) {
  using ir::BinaryOp;
  if (std::optional<Value> fma = Contracted(b)) return *fma;
  const DataType t = b.a.dtype();
  const Value x = Expr(b.a), y = Expr(b.b);
  if (failed()) return Const(DataType::kI32, 0);
  const bool is_float = t == DataType::kF32 || t == DataType::kF64;
  if (t == DataType::kF16 || t == DataType::kBF16) {
    // __half / __nv_bfloat16 operators: native f16 arithmetic. Comparisons
    // and min / max go through f32 in the prelude; both are exact there.
    Fail("f16 / bf16 arithmetic");
    return x;
  }
  if (!is_float && !IsInt(t) && t != DataType::kBool) {
    Fail("arithmetic of an 8-bit or 16-bit dtype");
    return x;
  }
  const std::string vt = ValueType(t);
  const bool is64 = t == DataType::kI64;
  const std::string bits = is64 ? "b64" : "b32";
  if (ir::IsComparison(b.op)) {
    if (x.int_const && y.int_const) {
      const int64_t a = *x.int_const, c = *y.int_const;
      bool r = false;
      switch (b.op) {
        case BinaryOp::kEQ:
          r = a == c;
          break;
        case BinaryOp::kNE:
          r = a != c;
          break;
        case BinaryOp::kLT:
          r = a < c;
          break;
        case BinaryOp::kLE:
          r = a <= c;
          break;
        case BinaryOp::kGT:
          r = a > c;
          break;
        default:
          r = a >= c;
          break;
      }
      return Const(DataType::kBool, r);
    }
    if (t == DataType::kBool) {
      if (b.op != BinaryOp::kEQ && b.op != BinaryOp::kNE) {
        Fail("ordering bools");
        return x;
      }
      const Value ne = Emit(DataType::kBool, "xor.pred", {x, y});
      return b.op == BinaryOp::kNE ? ne
                                   : Emit(DataType::kBool, "not.pred", {ne});
    }
    return Emit(DataType::kBool,
                absl::StrCat("setp.", Compare(b.op, is_float), ".", vt),
                {x, y});
  }
  if (t == DataType::kBool) {
    if (x.int_const && y.int_const) {
      if (std::optional<int64_t> r =
              FoldBitwise(b.op, *x.int_const, *y.int_const)) {
        return Const(t, *r);
      }
    }
    switch (b.op) {
      case BinaryOp::kBitAnd:
        return Emit(t, "and.pred", {x, y});
      case BinaryOp::kBitOr:
        return Emit(t, "or.pred", {x, y});
      case BinaryOp::kBitXor:
        return Emit(t, "xor.pred", {x, y});
      default:
        Fail("bool arithmetic");
        return x;
    }
  }
  if (is_float) {
    if (x.float_const && y.float_const) {
      const double a = *x.float_const, c = *y.float_const;
      std::optional<double> r;
      switch (b.op) {
        case BinaryOp::kAdd:
          r = a + c;
          break;
        case BinaryOp::kSub:
          r = a - c;
          break;
        case BinaryOp::kMul:
          r = a * c;
          break;
        default:
          break;
      }
      if (r) {
        if (t == DataType::kF32)
          r = static_cast<double>(static_cast<float>(*r));
        return Value{.dtype = t, .float_const = *r};
      }
    }
    switch (b.op) {
      case BinaryOp::kAdd:
        return Emit(t, "add." + vt, {x, y});
      case BinaryOp::kSub:
        return Emit(t, "sub." + vt, {x, y});
      case BinaryOp::kMul:
        return Emit(t, "mul." + vt, {x, y});
      case BinaryOp::kDiv: {
        // By a power of two: the product by its reciprocal is exact (as
        // NVVM rewrites it); else IEEE division.
        int exp = 0;
        if (y.float_const && std::frexp(*y.float_const, &exp) == 0.5 &&
            std::abs(exp) < 100) {
          return Emit(
              t, "mul." + vt,
              {x, Value{.dtype = t, .float_const = 1.0 / *y.float_const}});
        }
        return Emit(t, "div.rn." + vt, {x, y});
      }
      case BinaryOp::kMin:
        return Emit(t, "min." + vt, {x, y});
      case BinaryOp::kMax:
        return Emit(t, "max." + vt, {x, y});
      default:
        Fail(absl::StrCat("float ", ir::BinaryOpName(b.op)));
        return x;
    }
  }
  // Integers.
  const bool is_unsigned = t == DataType::kU32;
  if (x.int_const && y.int_const) {
    const int64_t a = *x.int_const, c = *y.int_const;
    if (std::optional<int64_t> r = FoldBitwise(b.op, a, c)) {
      return Const(t, *r);
    }
    switch (b.op) {
      case BinaryOp::kAdd:
        return Const(t, a + c);
      case BinaryOp::kSub:
        return Const(t, a - c);
      case BinaryOp::kMul:
        return Const(t, a * c);
      case BinaryOp::kDiv:
        if (c != 0) return Const(t, is_unsigned ? a / c : FloorDiv(a, c));
        break;
      case BinaryOp::kMod:
        if (c != 0) return Const(t, is_unsigned ? a % c : FloorMod(a, c));
        break;
      case BinaryOp::kCeilDiv:
        if (c != 0)
          return Const(t, is_unsigned ? (a + c - 1) / c : -FloorDiv(-a, c));
        break;
      case BinaryOp::kMin:
        return Const(t, std::min(a, c));
      case BinaryOp::kMax:
        return Const(t, std::max(a, c));
      case BinaryOp::kShl:
        if (c >= 0 && c < (is64 ? 64 : 32)) return Const(t, a << c);
        break;
      case BinaryOp::kShr:
        if (c >= 0 && c < (is64 ? 64 : 32)) {
          return Const(t, is_unsigned ? static_cast<int64_t>(
                                            static_cast<uint32_t>(a) >> c)
                                      : a >> c);
        }
        break;
      default:
        break;
    }
  }
  // Identities the unrolled index arithmetic is full of.
  auto is = [](const Value& v, int64_t c) {
    return v.int_const && *v.int_const == c;
  };
  switch (b.op) {
    case BinaryOp::kAdd:
      if (is(x, 0)) return y;
      if (is(y, 0)) return x;
      return Emit(t, "add." + vt, {x, y});
    case BinaryOp::kSub:
      if (is(y, 0)) return x;
      return Emit(t, "sub." + vt, {x, y});
    case BinaryOp::kMul:
      if (is(x, 0) || is(y, 0)) return Const(t, 0);
      if (is(x, 1)) return y;
      if (is(y, 1)) return x;
      return Emit(t, "mul.lo." + vt, {x, y});
    case BinaryOp::kBitAnd:
      return Emit(t, "and." + bits, {x, y});
    case BinaryOp::kBitOr:
      return Emit(t, "or." + bits, {x, y});
    case BinaryOp::kBitXor:
      return Emit(t, "xor." + bits, {x, y});
    case BinaryOp::kShl:
      if (is(y, 0)) return x;
      return Emit(t, "shl." + bits, {x, Cast(y, DataType::kU32)});
    case BinaryOp::kShr:
      if (is(y, 0)) return x;
      return Emit(t, "shr." + vt, {x, Cast(y, DataType::kU32)});
    case BinaryOp::kMin:
      return Emit(t, "min." + vt, {x, y});
    case BinaryOp::kMax:
      return Emit(t, "max." + vt, {x, y});
    default:
      break;
  }
  // Division: floor semantics for signed ints (the IR's), C's for u32.
  const int log2 = y.int_const ? Log2(*y.int_const) : -1;
  const bool nonneg = ir::arith::ProvablyNonNegative(b.a);
  if (b.op == BinaryOp::kDiv || b.op == BinaryOp::kMod) {
    if (is(y, 1)) return b.op == BinaryOp::kDiv ? x : Const(t, 0);
    if (log2 > 0) {  // floor semantics hold for negative x too
      return b.op == BinaryOp::kDiv
                 ? Emit(t, "shr." + vt, {x, Const(DataType::kU32, log2)})
                 : Emit(t, "and." + bits, {x, Const(t, *y.int_const - 1)});
    }
    if (is_unsigned) {
      return Emit(t, (b.op == BinaryOp::kDiv ? "div." : "rem.") + vt, {x, y});
    }
    if (y.int_const && *y.int_const > 0 && (nonneg || !is64)) {
      // The remainder from the quotient, so a pipeline's stage (k % 3) and
      // phase (k / 3) share one division, as NVVM has them.
      Value q;
      if (is64) {
        q = Emit(t, "div.u64", {x, y});
      } else if (nonneg) {
        q = DivideByConstant(x, *y.int_const);
      } else {
        // Floor division of any x: with s = x >> 31 (0 or -1), x ^ s is
        // x or -x - 1 >= 0, and floor(x / d) = ((x ^ s) / d) ^ s.
        const Value sign = Emit(t, "shr.s32", {x, Const(DataType::kU32, 31)});
        const Value folded = Emit(t, "xor.b32", {x, sign});
        q = Emit(t, "xor.b32", {DivideByConstant(folded, *y.int_const), sign});
      }
      if (b.op == BinaryOp::kDiv) return q;
      return Emit(t, "sub." + vt, {x, Emit(t, "mul.lo." + vt, {q, y})});
    }
    // One division: the remainder from the quotient (as NVVM does).
    const Value q = Emit(t, "div." + vt, {x, y});
    const Value r = Emit(t, "sub." + vt, {x, Emit(t, "mul.lo." + vt, {q, y})});
    // The remainder's sign differs from the divisor's: one step down.
    const Value nonzero =
        Emit(DataType::kBool, "setp.ne." + vt, {r, Const(t, 0)});
    const Value differ = Emit(DataType::kBool, "setp.lt." + vt,
                              {Emit(t, "xor." + bits, {r, y}), Const(t, 0)});
    const Value fix = Emit(DataType::kBool, "and.pred", {nonzero, differ});
    if (b.op == BinaryOp::kDiv) {
      return Emit(
          t, "sub." + vt,
          {q, Emit(t, "selp." + bits, {Const(t, 1), Const(t, 0), fix})});
    }
    return Emit(t, "add." + vt,
                {r, Emit(t, "selp." + bits, {y, Const(t, 0), fix})});
  }
  if (b.op == BinaryOp::kCeilDiv) {
    if (is_unsigned) {
      const Value q = Emit(t, "div." + vt, {x, y});
      const Value r =
          Emit(t, "sub." + vt, {x, Emit(t, "mul.lo." + vt, {q, y})});
      const Value up = Emit(DataType::kBool, "setp.ne." + vt, {r, Const(t, 0)});
      return Emit(t, "add." + vt,
                  {q, Emit(t, "selp." + bits, {Const(t, 1), Const(t, 0), up})});
    }
    // -floor(-x / y)
    const Value nx = Emit(t, "neg." + vt, {x});
    Value q;
    if (log2 > 0) {
      q = Emit(t, "shr." + vt, {nx, Const(DataType::kU32, log2)});
    } else {
      const Value d = Emit(t, "div." + vt, {nx, y});
      const Value r =
          Emit(t, "sub." + vt, {nx, Emit(t, "mul.lo." + vt, {d, y})});
      const Value nonzero =
          Emit(DataType::kBool, "setp.ne." + vt, {r, Const(t, 0)});
      const Value differ = Emit(DataType::kBool, "setp.lt." + vt,
                                {Emit(t, "xor." + bits, {r, y}), Const(t, 0)});
      const Value fix = Emit(DataType::kBool, "and.pred", {nonzero, differ});
      q = Emit(t, "sub." + vt,
               {d, Emit(t, "selp." + bits, {Const(t, 1), Const(t, 0), fix})});
    }
    return Emit(t, "neg." + vt, {q});
  }
  Fail(absl::StrCat("integer ", ir::BinaryOpName(b.op)));
  return x;
}

}  // namespace tessel::codegen::ptx
