// Expressions as PTX: the dispatch over expression kinds, && / || and ?:
// (a side evaluated only when C++ would, where that matters), casts and
// math. Arithmetic is ptx_arithmetic.cc, memory ptx_memory.cc, the values
// and Emit ptx_values.cc.
#include <bit>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {

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
      if (!ok || s == ir::Scope::kLocal || ir::IsScalarVar(s)) return;
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

Value Emitter::Convert(const Value& v, DataType to) { return Cast(v, to); }

// The same bits in a register of the other dtype (constants folded).
Value Emitter::Bitcast(const Value& v, DataType to) {
  if (failed()) return v;
  if (!Spelled(v.dtype) || !Spelled(to)) {
    Fail(absl::StrCat("a bitcast from ", ValueType(v.dtype), " to ",
                      ValueType(to)));
    return v;
  }
  if (v.int_const && to == DataType::kF32) {
    return Value{.dtype = to,
                 .float_const =
                     std::bit_cast<float>(static_cast<uint32_t>(*v.int_const))};
  }
  if (v.int_const && IsInt(to)) return Const(to, Wrap(to, *v.int_const));
  if (v.float_const && v.dtype == DataType::kF32 && IsInt(to)) {
    const uint32_t bits =
        std::bit_cast<uint32_t>(static_cast<float>(*v.float_const));
    return Const(to, Wrap(to, bits));
  }
  // Not through Emit: its reuse of equal instructions ignores the dtype.
  const std::string in = InReg(v), r = NewReg(to);
  Line(absl::StrCat(dtype_bytes(to) == 2 ? "mov.b16 " : "mov.b32 ", r, ", ", in,
                    ";"));
  return Value{.dtype = to, .reg = r, .key = r};
}

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
  // One instruction each (exp2 as tl::exp2_approx, from the prelude; rsqrt
  // as rsqrtf, round as rint); expf, logf, tanhf, ... are libdevice's
  // sequences, left to NVRTC.
  if (m.op == ir::MathOp::kExp2) {
    const std::string ex2 = PreludeOpcode("exp2_approx");
    if (failed()) return x;
    const Value r = Emit(DataType::kF32, ex2, {x});
    return t == DataType::kF32 ? r : Cast(r, t);
  }
  static constexpr std::pair<ir::MathOp, const char*> kInstructions[] = {
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

}  // namespace tessel::codegen::ptx
