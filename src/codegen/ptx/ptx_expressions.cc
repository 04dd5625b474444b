// Expressions as PTX: constants folded, pure values computed once per block,
// C++'s semantics as the CUDA printer's code has them (floor division of
// ints, short-circuit && / || and ?: where a side loads, f32 division
// rounded as division, fmaxf's NaN rule for max).
#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/ir/arith/bounds.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {
namespace {

bool IsInt(DataType t) {
  return t == DataType::kI32 || t == DataType::kU32 || t == DataType::kI64;
}

// An integer wrapped to the width of t, as the GPU computes it.
int64_t Wrap(DataType t, int64_t v) {
  switch (t) {
    case DataType::kI32:
      return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DataType::kU32:
      return static_cast<uint32_t>(v);
    case DataType::kBool:
      return v != 0;
    default:
      return v;
  }
}

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// log2 of a power of two, else -1.
int Log2(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  return std::countr_zero(static_cast<uint64_t>(v));
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

// Whether e can be evaluated where C++ might not evaluate it (the right of
// && / ||, a side of ?:): no shuffle (every lane must take those), and no
// load that could fault: registers, and read-only memory already loaded at
// the same address in this scope, are fine.
bool Emitter::Speculatable(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    Emitter* emitter;
    bool ok = true;
    void Visit(const ir::LoadNode* op) override {
      ir::IRVisitor::Visit(op);
      const ir::Scope s = op->buffer->scope;
      if (!ok || s == ir::Scope::kLocal || s == ir::Scope::kVar) return;
      ok = emitter->LoadedBefore(*op);
    }
    void Visit(const ir::CallNode* op) override {
      using I = passes::Intrinsic;
      std::optional<I> id = passes::IntrinsicOf(*op);
      if (id && (*id == I::kWarpReduceSum || *id == I::kWarpReduceMax ||
                 *id == I::kWarpReduceMin || *id == I::kWarpUniform ||
                 *id == I::kWarpScanExclusiveSum || *id == I::kWarpGroupLast)) {
        ok = false;
      }
      ir::IRVisitor::Visit(op);
    }
  } finder;
  finder.emitter = this;
  finder.VisitExpr(e);
  return finder.ok;
}

Value Emitter::Const(DataType t, int64_t v) {
  return Value{.dtype = t, .int_const = Wrap(t, v)};
}

std::string Emitter::Operand(const Value& v) {
  if (v.int_const) {
    if (v.dtype == DataType::kBool) return InReg(v);
    return absl::StrCat(*v.int_const);
  }
  if (v.float_const) {
    if (v.dtype == DataType::kF64) {
      return absl::StrFormat("0d%016X",
                             std::bit_cast<uint64_t>(*v.float_const));
    }
    if (v.dtype != DataType::kF32) return InReg(v);
    return absl::StrFormat(
        "0f%08X", std::bit_cast<uint32_t>(static_cast<float>(*v.float_const)));
  }
  return v.reg;
}

std::string Emitter::InReg(const Value& v) {
  if (!v.is_const()) return v.reg;
  const std::string key = absl::StrCat("const.", ValueType(v.dtype), ".",
                                       v.int_const ? *v.int_const : 0, ".",
                                       v.float_const ? *v.float_const : 0.0);
  if (std::string r = Lookup(key); !r.empty()) return r;
  const std::string r = NewReg(v.dtype);
  if (v.dtype == DataType::kBool) {
    Line(absl::StrCat("setp.", *v.int_const ? "eq" : "ne", ".u32 ", r,
                      ", 0, 0;"));
  } else if (v.dtype == DataType::kF16 || v.dtype == DataType::kBF16) {
    Value f = v;
    f.dtype = DataType::kF32;
    if (v.int_const)
      f = Value{.dtype = DataType::kF32,
                .float_const = static_cast<double>(*v.int_const)};
    Line(absl::StrCat("cvt.rn.", ValueType(v.dtype), ".f32 ", r, ", ",
                      Operand(f), ";"));
  } else {
    Line(absl::StrCat("mov", RegType(v.dtype), " ", r, ", ", Operand(v), ";"));
  }
  // Constants could live at the top; keep them in the current scope (a
  // register defined in a branch is not defined after it).
  Remember(key, r);
  return r;
}

Value Emitter::Emit(DataType t, const std::string& op, std::vector<Value> in) {
  // Constants that are no immediate get their register here first.
  for (Value& v : in) {
    if (v.is_const() &&
        (v.dtype == DataType::kBool || v.dtype == DataType::kF16 ||
         v.dtype == DataType::kBF16)) {
      const std::string r = InReg(v);
      v = Value{.dtype = v.dtype, .reg = r, .key = r};
    }
  }
  std::string key = op;
  for (const Value& v : in)
    absl::StrAppend(&key, " ", v.is_const() ? Operand(v) : v.key);
  if (std::string r = Lookup(key); !r.empty())
    return Value{.dtype = t, .reg = r, .key = r};
  // The outermost scope every operand is defined in, not past a loop.
  int depth = 0;
  for (const Value& v : in) depth = std::max(depth, Depth(v));
  for (int d = static_cast<int>(scopes_.size()) - 1; d > depth; --d) {
    if (scopes_[d].barrier) depth = d;
  }
  const int here = static_cast<int>(scopes_.size()) - 1;
  while (depth < here && scopes_[depth].hoist < 0) ++depth;
  std::vector<std::string> operands;
  for (const Value& v : in) operands.push_back(Operand(v));
  const std::string r = NewReg(t);
  const std::string line =
      absl::StrCat("\t", op, " ", r, operands.empty() ? "" : ", ",
                   absl::StrJoin(operands, ", "), ";\n");
  absl::StrAppend(
      &segments_[depth < here ? scopes_[depth].hoist : segments_.size() - 1],
      line);
  scopes_[depth].cse[key] = r;
  depth_[r] = depth;
  return Value{.dtype = t, .reg = r, .key = r};
}

Value Emitter::Expr(const ir::Expr& e) {
  if (failed()) return Const(DataType::kI32, 0);
  switch (e->kind) {
    case ir::ExprKind::kIntImm:
      return Const(e.dtype(), e.As<ir::IntImmNode>()->value);
    case ir::ExprKind::kFloatImm: {
      double v = e.As<ir::FloatImmNode>()->value;
      if (e.dtype() == DataType::kF32) v = static_cast<float>(v);
      return Value{.dtype = e.dtype(), .float_const = v};
    }
    case ir::ExprKind::kVar: {
      auto it = vars_.find(e.As<ir::VarNode>());
      if (it == vars_.end()) {
        Fail(absl::StrCat("unbound variable ", e.As<ir::VarNode>()->name));
        return Const(DataType::kI32, 0);
      }
      return it->second;
    }
    case ir::ExprKind::kBinary: {
      const auto* b = e.As<ir::BinaryNode>();
      if (b->op == ir::BinaryOp::kAnd || b->op == ir::BinaryOp::kOr)
        return Logical(*b);
      return Binary(*b);
    }
    case ir::ExprKind::kUnary: {
      const auto* u = e.As<ir::UnaryNode>();
      const Value a = Expr(u->a);
      const DataType t = u->a.dtype();
      switch (u->op) {
        case ir::UnaryOp::kNeg:
          if (a.int_const) return Const(t, -*a.int_const);
          if (a.float_const) {
            return Value{.dtype = t, .float_const = -*a.float_const};
          }
          return Emit(t, absl::StrCat("neg.", ValueType(t)), {a});
        case ir::UnaryOp::kNot:
          if (a.int_const) return Const(DataType::kBool, !*a.int_const);
          return Emit(DataType::kBool, "not.pred", {a});
        case ir::UnaryOp::kBitNot:
          if (a.int_const) return Const(t, ~*a.int_const);
          return Emit(t, t == DataType::kI64 ? "not.b64" : "not.b32", {a});
      }
      return a;
    }
    case ir::ExprKind::kSelect:
      return Select(*e.As<ir::SelectNode>());
    case ir::ExprKind::kCast:
      return Cast(Expr(e.As<ir::CastNode>()->value), e.dtype());
    case ir::ExprKind::kMath:
      return Math(*e.As<ir::MathNode>());
    case ir::ExprKind::kCall:
      return CallExpr(*e.As<ir::CallNode>());
    case ir::ExprKind::kLoad:
      return Load(*e.As<ir::LoadNode>());
  }
  Fail("an expression kind");
  return Const(DataType::kI32, 0);
}

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
      const int64_t a = *x.int_const, c = *y.int_const;
      switch (b.op) {
        case BinaryOp::kBitAnd:
          return Const(t, a & c);
        case BinaryOp::kBitOr:
          return Const(t, a | c);
        case BinaryOp::kBitXor:
          return Const(t, a ^ c);
        default:
          break;
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
      case BinaryOp::kBitAnd:
        return Const(t, a & c);
      case BinaryOp::kBitOr:
        return Const(t, a | c);
      case BinaryOp::kBitXor:
        return Const(t, a ^ c);
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
    const std::string op = b.op == BinaryOp::kDiv ? "div." : "rem.";
    if (is_unsigned || (nonneg && y.int_const && *y.int_const > 0))
      return Emit(t, op + vt, {x, y});
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

// && and ||: the right side only when C++ would evaluate it, where that
// matters (it loads or shuffles).
Value Emitter::Logical(const ir::BinaryNode& b) {
  const bool is_and = b.op == ir::BinaryOp::kAnd;
  const Value x = Expr(b.a);
  if (x.int_const) {
    if (is_and != (*x.int_const != 0)) return Const(DataType::kBool, !is_and);
    return Expr(b.b);
  }
  if (Speculatable(b.b)) {
    const Value y = Expr(b.b);
    if (y.int_const) {
      if (is_and != (*y.int_const != 0)) return Const(DataType::kBool, !is_and);
      return x;
    }
    return Emit(DataType::kBool, is_and ? "and.pred" : "or.pred", {x, y});
  }
  const std::string r = NewReg(DataType::kBool), end = NewLabel();
  Line(absl::StrCat("mov.pred ", r, ", ", x.reg, ";"));
  MarkHoist();
  Line(absl::StrCat("@", is_and ? "!" : "", r, " bra ", end, ";"));
  PushScope();
  const Value y = Expr(b.b);
  Line(absl::StrCat("mov.pred ", r, ", ", InReg(y), ";"));
  PopScope();
  Line(end + ":");
  return Value{.dtype = DataType::kBool, .reg = r, .key = r};
}

Value Emitter::Select(const ir::SelectNode& s) {
  const Value c = Expr(s.cond);
  const DataType t = s.true_value.dtype();
  if (c.int_const) return Expr(*c.int_const ? s.true_value : s.false_value);
  if (Speculatable(s.true_value) && Speculatable(s.false_value)) {
    const Value a = Expr(s.true_value), b = Expr(s.false_value);
    if (t == DataType::kBool) {
      const Value ta = Emit(t, "and.pred", {c, a});
      const Value fb = Emit(t, "and.pred", {Emit(t, "not.pred", {c}), b});
      return Emit(t, "or.pred", {ta, fb});
    }
    const char* bits = dtype_bytes(t) == 8   ? "b64"
                       : dtype_bytes(t) == 2 ? "b16"
                                             : "b32";
    if (t == DataType::kF32) return Emit(t, "selp.f32", {a, b, c});
    return Emit(t, absl::StrCat("selp.", bits), {a, b, c});
  }
  const std::string r = NewReg(t), other = NewLabel(), end = NewLabel();
  MarkHoist();
  Line(absl::StrCat("@!", c.reg, " bra ", other, ";"));
  PushScope();
  Line(absl::StrCat("mov", RegType(t), " ", r, ", ", InReg(Expr(s.true_value)),
                    ";"));
  PopScope();
  Line(absl::StrCat("bra.uni ", end, ";"));
  Line(other + ":");
  PushScope();
  Line(absl::StrCat("mov", RegType(t), " ", r, ", ", InReg(Expr(s.false_value)),
                    ";"));
  PopScope();
  Line(end + ":");
  return Value{.dtype = t, .reg = r, .key = r};
}

// Whether a register value still holds what it held when v was taken.
bool Emitter::Current(const Value& v) {
  if (v.is_const() || v.key == v.reg) return true;
  return v.key == absl::StrCat(v.reg, "@", versions_[v.reg]);
}

Value Emitter::Convert(const Value& v, DataType to) { return Cast(v, to); }

Value Emitter::Cast(const Value& v, DataType to) {
  const DataType from = v.dtype;
  if (from == to || failed()) return v;
  auto half = [](DataType t) {
    return t == DataType::kF16 || t == DataType::kBF16;
  };
  if (!(IsInt(from) || from == DataType::kBool || from == DataType::kF32 ||
        half(from)) ||
      !(IsInt(to) || to == DataType::kBool || to == DataType::kF32 ||
        half(to))) {
    Fail(absl::StrCat("a cast from ", ValueType(from), " to ", ValueType(to)));
    return v;
  }
  // Constants.
  if (v.int_const) {
    if (IsInt(to) || to == DataType::kBool) return Const(to, *v.int_const);
    return Value{
        .dtype = to,
        .float_const = static_cast<double>(static_cast<float>(
            from == DataType::kU32
                ? static_cast<double>(static_cast<uint32_t>(*v.int_const))
                : static_cast<double>(*v.int_const)))};
  }
  if (v.float_const && (to == DataType::kF32 || to == DataType::kBool)) {
    if (to == DataType::kBool) return Const(to, *v.float_const != 0);
    if (from == DataType::kF32)
      return Value{.dtype = to, .float_const = *v.float_const};
  }
  if (v.float_const && IsInt(to) && std::isfinite(*v.float_const) &&
      std::fabs(*v.float_const) < 2147483647.0 && from == DataType::kF32) {
    return Const(to, static_cast<int64_t>(std::trunc(*v.float_const)));
  }
  // f16 / bf16 to or from anything but f32: through f32, as the printer.
  if (half(from) && to != DataType::kF32) {
    return Cast(Cast(v, DataType::kF32), to);
  }
  if (half(to) && from != DataType::kF32) {
    return Cast(Cast(v, DataType::kF32), to);
  }
  const Value in = v.float_const
                       ? Value{.dtype = from, .reg = InReg(v), .key = InReg(v)}
                       : v;
  if (half(to)) {
    const Value r =
        Emit(to, absl::StrCat("cvt.rn.", ValueType(to), ".f32"), {in});
    rounded_from_[r.key] = in;
    return r;
  }
  if (from == DataType::kF16) return Emit(to, "cvt.f32.f16", {in});
  if (from == DataType::kBF16) {
    // bf16 is the top half of an f32.
    const Value wide = Emit(DataType::kU32, "cvt.u32.u16", {in});
    const Value bits =
        Emit(DataType::kU32, "shl.b32", {wide, Const(DataType::kU32, 16)});
    return Emit(to, "mov.b32", {bits});
  }
  if (to == DataType::kBool) {
    if (from == DataType::kF32) {
      return Emit(to, "setp.neu.f32",
                  {in, Value{.dtype = DataType::kF32, .float_const = 0.0}});
    }
    return Emit(to, absl::StrCat("setp.ne.", ValueType(from)),
                {in, Const(from, 0)});
  }
  if (from == DataType::kBool) {
    return Emit(to, to == DataType::kI64 ? "selp.b64" : "selp.b32",
                {Const(to, 1), Const(to, 0), in});
  }
  if (to == DataType::kF32) {
    return Emit(to, absl::StrCat("cvt.rn.f32.", ValueType(from)), {in});
  }
  if (from == DataType::kF32) {
    return Emit(to, absl::StrCat("cvt.rzi.", ValueType(to), ".f32"), {in});
  }
  // Integers of one width: the same register, read as the other type.
  if ((from == DataType::kI32 && to == DataType::kU32) ||
      (from == DataType::kU32 && to == DataType::kI32)) {
    Value out = in;
    out.dtype = to;
    return out;
  }
  if (to == DataType::kI64) {
    return Emit(to, from == DataType::kU32 ? "cvt.u64.u32" : "cvt.s64.s32",
                {in});
  }
  return Emit(to, "cvt.u32.u64", {in});  // i64 -> i32 / u32: the low word
}

Value Emitter::Math(const ir::MathNode& m) {
  const DataType t = m.dtype;
  Value x = Expr(m.a);
  if (failed()) return x;
  if (t == DataType::kI32 && m.op == ir::MathOp::kAbs)
    return Emit(t, "abs.s32", {x});
  if (t == DataType::kU32 && m.op == ir::MathOp::kAbs) return x;
  if (t != DataType::kF32 && t != DataType::kF16 && t != DataType::kBF16) {
    Fail("math of this dtype");
    return x;
  }
  x = Cast(x, DataType::kF32);
  if (x.float_const)
    x = Value{.dtype = DataType::kF32, .reg = InReg(x), .key = InReg(x)};
  // One instruction each (exp2 as tl::exp2_approx, rsqrt as rsqrtf, round
  // as rint); expf, logf, tanhf, ... are libdevice's sequences, left to
  // NVRTC.
  static constexpr std::pair<ir::MathOp, const char*> kInstructions[] = {
      {ir::MathOp::kExp2, "ex2.approx.ftz.f32"},
      {ir::MathOp::kRsqrt, "rsqrt.approx.f32"},
      {ir::MathOp::kSqrt, "sqrt.rn.f32"},
      {ir::MathOp::kAbs, "abs.f32"},
      {ir::MathOp::kFloor, "cvt.rmi.f32.f32"},
      {ir::MathOp::kCeil, "cvt.rpi.f32.f32"},
      {ir::MathOp::kRound, "cvt.rni.f32.f32"}};
  const char* op = nullptr;
  for (const auto& [math, instruction] : kInstructions) {
    if (math == m.op) op = instruction;
  }
  if (op == nullptr) {
    Fail("a math function other than exp2, rsqrt, sqrt, abs, rounding");
    return x;
  }
  const Value r = Emit(DataType::kF32, op, {x});
  return t == DataType::kF32 ? r : Cast(r, t);
}

std::string Emitter::LocalElement(const ir::BufferNode* b,
                                  const std::vector<int64_t>& idx) {
  auto regs = local_.find(b);
  if (regs == local_.end()) {
    Fail(absl::StrCat("local ", b->name, " used outside its allocation"));
    return "";
  }
  const std::vector<int64_t>& extents = extents_.at(b);
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k)
    offset = offset * extents[k] + (k < idx.size() ? idx[k] : 0);
  if (idx.size() > extents.size() || offset < 0 ||
      offset >= static_cast<int64_t>(regs->second.size())) {
    Fail(absl::StrCat("local ", b->name, " indexed out of its bounds: [",
                      absl::StrJoin(idx, ", "), "] of [",
                      absl::StrJoin(extents, ", "), "]"));
    return "";
  }
  return regs->second[offset];
}

// The printer reads a reference as a pointer to its element: further
// indices count from there, over the array's trailing dimensions where they
// fit, else as [..][4] (wgmma's accumulators) or flat.
std::string Emitter::RefElement(const ir::Expr& ref,
                                const std::vector<int64_t>& more) {
  const ir::Expr& arg =
      ref.As<ir::CallNode>() ? ref.As<ir::CallNode>()->args[0] : ref;
  const auto* l = arg.As<ir::LoadNode>();
  if (l == nullptr || !local_.count(l->buffer.get())) {
    Fail("a register operand that is not a local array");
    return "";
  }
  const std::vector<int64_t>& extents = extents_.at(l->buffer.get());
  std::vector<int64_t> idx;
  for (const ir::Expr& i : l->indices) {
    const Value c = Expr(i);
    if (!c.int_const) {
      Fail("a register operand at a variable index");
      return "";
    }
    idx.push_back(*c.int_const);
  }
  if (idx.size() + more.size() <= extents.size()) {
    idx.resize(extents.size() - more.size(), 0);
    idx.insert(idx.end(), more.begin(), more.end());
    return LocalElement(l->buffer.get(), idx);
  }
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k)
    offset = offset * extents[k] + (k < idx.size() ? idx[k] : 0);
  int64_t step = 0;
  for (int64_t m : more) step = step * 4 + m;
  if (more.size() == 1) step = more[0];
  const std::vector<std::string>& regs = local_.at(l->buffer.get());
  if (offset + step < 0 || offset + step >= static_cast<int64_t>(regs.size())) {
    Fail(absl::StrCat("a register operand past the end of ", l->buffer->name));
    return "";
  }
  return regs[offset + step];
}

// An integer index as variable part + constant: sums, differences and
// products by constants are taken apart (as NVVM reassociates them), so the
// constant goes into the address's immediate offset and the copies of an
// unrolled access share one variable part. Exact in two's complement.
std::pair<std::optional<Value>, int64_t> Emitter::Linear(const ir::Expr& e) {
  const DataType t = e.dtype();
  if (const auto* b = e.As<ir::BinaryNode>()) {
    if (b->op == ir::BinaryOp::kAdd || b->op == ir::BinaryOp::kSub) {
      auto [va, ca] = Linear(b->a);
      auto [vb, cb] = Linear(b->b);
      const bool add = b->op == ir::BinaryOp::kAdd;
      const int64_t c = add ? ca + cb : ca - cb;
      if (!vb) return {va, c};
      if (!va) {
        if (add) return {vb, c};
        return {Emit(t, absl::StrCat("neg.", ValueType(t)), {*vb}), c};
      }
      return {Emit(t, absl::StrCat(add ? "add." : "sub.", ValueType(t)),
                   {*va, *vb}),
              c};
    }
    if (b->op == ir::BinaryOp::kMul) {
      const Value k = Expr(b->b);
      if (k.int_const) {
        auto [va, ca] = Linear(b->a);
        if (!va) return {std::nullopt, ca * *k.int_const};
        if (*k.int_const == 0) return {std::nullopt, 0};
        if (*k.int_const == 1) return {va, ca};
        return {Emit(t, absl::StrCat("mul.lo.", ValueType(t)), {*va, k}),
                ca * *k.int_const};
      }
    }
  }
  const Value v = Expr(e);
  if (v.int_const) return {std::nullopt, *v.int_const};
  return {v, 0};
}

std::string Emitter::SharedAddress(const ir::LoadNode& l, int64_t* offset) {
  const ir::BufferNode* b = l.buffer.get();
  auto planned = st_.smem.offset.find(b);
  if (planned == st_.smem.offset.end() || l.indices.size() != 1) {
    Fail(absl::StrCat("shared ", b->name, " without a planned flat offset"));
    return "";
  }
  const int64_t bytes =
      b->scope == ir::Scope::kBarrier ? 8 : dtype_bytes(b->dtype);
  auto [var, c] = Linear(l.indices[0]);
  *offset = planned->second + c * bytes;
  if (!var) return smem_base_;
  const Value v = Cast(*var, DataType::kU32);
  const Value scaled = bytes == 1
                           ? v
                           : Emit(DataType::kU32, "shl.b32",
                                  {v, Const(DataType::kU32, Log2(bytes))});
  return Emit(DataType::kU32, "add.u32",
              {Value{.dtype = DataType::kU32,
                     .reg = smem_base_,
                     .key = smem_base_},
               scaled})
      .reg;
}

std::string Emitter::GlobalAddress(const ir::LoadNode& l, int64_t* offset) {
  const ir::BufferNode* b = l.buffer.get();
  auto base_reg = global_base_.find(b);
  if (base_reg == global_base_.end() || l.indices.size() != 1) {
    Fail(absl::StrCat("global ", b->name, " not a flat kernel parameter"));
    return "";
  }
  const int64_t bytes = dtype_bytes(b->dtype);
  auto [var, c] = Linear(l.indices[0]);
  *offset = c * bytes;
  const Value ptr{.dtype = DataType::kI64,
                  .reg = base_reg->second,
                  .key = base_reg->second};
  if (!var) {
    if (*offset < 0) {
      const Value r = Emit(DataType::kI64, "add.s64",
                           {ptr, Const(DataType::kI64, *offset)});
      *offset = 0;
      return r.reg;
    }
    return ptr.reg;
  }
  const Value v = *var;
  Value wide;
  if (v.dtype == DataType::kI64) {
    wide =
        Emit(DataType::kI64, "mul.lo.s64", {v, Const(DataType::kI64, bytes)});
  } else {
    wide = Emit(DataType::kI64,
                v.dtype == DataType::kU32 ? "mul.wide.u32" : "mul.wide.s32",
                {v, Const(v.dtype, bytes)});
  }
  const Value r = Emit(DataType::kI64, "add.s64", {ptr, wide});
  if (*offset < 0) {
    const Value shifted =
        Emit(DataType::kI64, "add.s64", {r, Const(DataType::kI64, *offset)});
    *offset = 0;
    return shifted.reg;
  }
  return r.reg;
}

std::string Emitter::ElementAddress(const ir::Expr& load, int64_t* offset,
                                    bool* shared) {
  const auto* l = load.As<ir::LoadNode>();
  if (l == nullptr) {
    Fail("an address of something not a buffer element");
    return "";
  }
  const ir::Scope scope = l->buffer->scope;
  *shared = scope == ir::Scope::kShared || scope == ir::Scope::kBarrier;
  if (*shared) return SharedAddress(*l, offset);
  if (scope == ir::Scope::kGlobal) return GlobalAddress(*l, offset);
  Fail("an address of a register array");
  return "";
}

std::string Emitter::LoadKey(const ir::BufferNode& b, bool shared,
                             const std::string& addr, int64_t offset) {
  const bool b16 = dtype_bytes(b.dtype) == 2;
  return absl::StrCat("ld.", shared ? "shared" : "global",
                      !shared && read_only_.count(&b) ? ".nc" : "", ".",
                      b16 ? "b16" : ValueType(b.dtype), " [", addr,
                      offset ? absl::StrCat("+", offset) : "", "]");
}

bool Emitter::LoadedBefore(const ir::LoadNode& l) {
  if (l.buffer->scope != ir::Scope::kGlobal ||
      !read_only_.count(l.buffer.get()))
    return false;
  int64_t offset = 0;
  bool shared = false;
  const std::string addr =
      ElementAddress(ir::Load(l.buffer, l.indices), &offset, &shared);
  return !failed() &&
         !Lookup(LoadKey(*l.buffer.get(), shared, addr, offset)).empty();
}

Value Emitter::Load(const ir::LoadNode& l) {
  const ir::BufferNode* b = l.buffer.get();
  if (b->scope == ir::Scope::kLocal || b->scope == ir::Scope::kVar) {
    std::vector<int64_t> idx;
    for (const ir::Expr& i : l.indices) {
      const Value c = Expr(i);
      if (!c.int_const) {
        Fail("a local array indexed by a variable");
        return Const(DataType::kI32, 0);
      }
      idx.push_back(*c.int_const);
    }
    if (b->scope == ir::Scope::kVar) idx.assign(1, 0);
    const std::string r = LocalElement(b, idx);
    return Value{
        .dtype = b->dtype, .reg = r, .key = absl::StrCat(r, "@", versions_[r])};
  }
  if (!Spelled(b->dtype) || b->dtype == DataType::kBool) {
    Fail("a load of an 8-bit, bool or f64 element");
    return Const(DataType::kI32, 0);
  }
  int64_t offset = 0;
  bool shared = false;
  const std::string addr =
      ElementAddress(ir::Load(l.buffer, l.indices), &offset, &shared);
  if (failed()) return Const(DataType::kI32, 0);
  const bool read_only = !shared && read_only_.count(b);
  const std::string key = LoadKey(*b, shared, addr, offset);
  const std::string op = key.substr(0, key.find(' '));
  const std::string at = key.substr(key.find(' ') + 1);
  // Memory the kernel never writes reads the same every time: one load per
  // address and scope (not hoisted: the branch may guard its bounds).
  if (read_only) {
    if (std::string r = Lookup(key); !r.empty())
      return Value{.dtype = b->dtype, .reg = r, .key = r};
  }
  const std::string r = NewReg(b->dtype);
  Line(absl::StrCat(op, " ", r, ", ", at, ";"));
  if (read_only) Remember(key, r);
  return Value{.dtype = b->dtype, .reg = r, .key = r};
}

}  // namespace tessel::codegen::ptx
