// Expressions -> closures. Integer and bool values are int64 wrapped to
// their dtype after every op; float values are doubles rounded to their
// dtype after every op (f64 not at all), which is what the GPU computes
// for f16/bf16/f32 arithmetic without fused multiply-adds.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/compiler.h"
#include "src/interp/numeric.h"
#include "src/interp/status_macros.h"
#include "src/ir/bitcast.h"
#include "src/ir/op.h"

namespace tessel::interp {
namespace {

constexpr int kMaxRank = 8;

bool IsIntLike(DataType t) { return !is_float(t); }

template <typename Op>
IntFn MakeIntBinary(DataType t, IntFn a, IntFn b, Op op) {
  return [t, a = std::move(a), b = std::move(b), op](Frame& f) -> int64_t {
    const int64_t x = a(f);
    const int64_t y = b(f);
    return WrapInt(t, op(x, y));
  };
}

template <typename Op>
IntFn MakeCompare(FloatFn a, FloatFn b, Op op) {
  return [a = std::move(a), b = std::move(b), op](Frame& f) -> int64_t {
    const double x = a(f);
    const double y = b(f);
    return op(x, y) ? 1 : 0;
  };
}

template <typename Op>
IntFn MakeIntCompare(IntFn a, IntFn b, Op op) {
  return [a = std::move(a), b = std::move(b), op](Frame& f) -> int64_t {
    const int64_t x = a(f);
    const int64_t y = b(f);
    return op(x, y) ? 1 : 0;
  };
}

// A float result rounded to dtype t (specialised for the common dtypes).
template <typename Op>
FloatFn MakeFloatBinary(DataType t, FloatFn a, FloatFn b, Op op) {
  switch (t) {
    case DataType::kF64:
      return [a = std::move(a), b = std::move(b), op](Frame& f) {
        const double x = a(f);
        const double y = b(f);
        return op(x, y);
      };
    case DataType::kF32:
      return [a = std::move(a), b = std::move(b), op](Frame& f) {
        const double x = a(f);
        const double y = b(f);
        return static_cast<double>(static_cast<float>(op(x, y)));
      };
    default:
      return [t, a = std::move(a), b = std::move(b), op](Frame& f) {
        const double x = a(f);
        const double y = b(f);
        return RoundToDtype(t, op(x, y));
      };
  }
}

template <typename Op>
FloatFn MakeFloatUnary(DataType t, FloatFn a, Op op) {
  return
      [t, a = std::move(a), op](Frame& f) { return RoundToDtype(t, op(a(f))); };
}

uint64_t U(int64_t v) { return static_cast<uint64_t>(v); }

}  // namespace

absl::Status Compiler::Error(absl::StatusCode code,
                             const std::string& message) const {
  return absl::Status(
      code,
      absl::StrCat(site_.op, " at ", ir::FormatLoc(site_.loc), ": ", message));
}

absl::StatusOr<int> Compiler::VarSlot(const ir::VarNode* var) {
  auto it = var_slots_.find(var);
  if (it == var_slots_.end()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("variable '", var->name,
                              "' is used outside the loop or kernel that "
                              "binds it"));
  }
  return it->second;
}

int Compiler::BindVar(const ir::Var& var) {
  const int slot = exe_->num_vars++;
  var_slots_[var.get()] = slot;
  return slot;
}

absl::StatusOr<int> Compiler::BufferSlot(const ir::Buffer& buffer) {
  auto it = buffer_slots_.find(buffer.get());
  if (it == buffer_slots_.end() || !live_.contains(buffer.get())) {
    if (buffer->scope == ir::Scope::kGlobal) {
      return Error(absl::StatusCode::kInvalidArgument,
                   absl::StrCat("global tensor '", buffer->name,
                                "' is not a parameter of the program"));
    }
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("buffer '", buffer->name,
                              "' is used outside its allocation"));
  }
  return it->second;
}

absl::StatusOr<IntFn> Compiler::FlatIndex(const ir::Buffer& buffer,
                                          const std::vector<ir::Expr>& indices,
                                          Access access) {
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(buffer));
  if (static_cast<int>(indices.size()) != buffer->rank()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat(indices.size(), " indices for '", buffer->name,
                              "' of rank ", buffer->rank()));
  }
  if (buffer->rank() > kMaxRank) {
    return Error(absl::StatusCode::kUnimplemented,
                 absl::StrCat("'", buffer->name, "' has rank ", buffer->rank(),
                              "; the interpreter supports up to ", kMaxRank));
  }
  std::vector<IntFn> idx;
  for (const ir::Expr& e : indices) {
    INTERP_ASSIGN_OR_RETURN(IntFn fn, Int(e));
    idx.push_back(std::move(fn));
  }
  // Errors name the access itself, a load inside a store's value included.
  const Site site{access == Access::kLoad ? "load" : "store", site_.loc};
  const bool global = buffer->scope == ir::Scope::kGlobal;
  const bool check = access == Access::kLoad && !global;
  return IntFn([slot, idx = std::move(idx), site, check](Frame& f) -> int64_t {
    const BufferInstance& b = f.buffers[slot];
    std::array<int64_t, kMaxRank> index;
    int64_t flat = 0;
    bool in_bounds = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      index[d] = idx[d](f);
      in_bounds &= index[d] >= 0 && index[d] < b.shape[d];
      flat += index[d] * b.strides[d];
    }
    if (f.failed) return -1;
    // Boundary rule (docs/ir.md): outside a global tensor a load reads 0
    // and a store is skipped, as the GPU's guards do.
    if (!in_bounds && b.global) return kOutside;
    if (!in_bounds) {
      std::vector<int64_t> where(index.begin(), index.begin() + idx.size());
      Fail(f, site, absl::StatusCode::kOutOfRange,
           absl::StrCat("index ", ElementName(b, where),
                        " is out of bounds of shape [",
                        absl::StrJoin(b.shape, ", "), "]"));
      return -1;
    }
    if (check && !b.init[flat]) {
      std::vector<int64_t> where(index.begin(), index.begin() + idx.size());
      Fail(f, site, absl::StatusCode::kFailedPrecondition,
           absl::StrCat("reads ", ElementName(b, where),
                        " before anything wrote it"));
      return -1;
    }
    return flat;
  });
}

absl::StatusOr<IntFn> Compiler::IntLoad(const ir::LoadNode* op) {
  INTERP_ASSIGN_OR_RETURN(IntFn flat,
                          FlatIndex(op->buffer, op->indices, Access::kLoad));
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->buffer));
  if (op->buffer->scope == ir::Scope::kGlobal) globals_accessed_.insert(slot);
  return IntFn([slot, flat = std::move(flat)](Frame& f) -> int64_t {
    const int64_t i = flat(f);
    return i < 0 ? 0 : f.buffers[slot].GetInt(i);  // kOutside reads 0
  });
}

absl::StatusOr<FloatFn> Compiler::FloatLoad(const ir::LoadNode* op) {
  INTERP_ASSIGN_OR_RETURN(IntFn flat,
                          FlatIndex(op->buffer, op->indices, Access::kLoad));
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->buffer));
  if (op->buffer->scope == ir::Scope::kGlobal) globals_accessed_.insert(slot);
  const DataType t = op->dtype;
  const DataType bt = op->buffer->dtype;
  return FloatFn([slot, t, bt, flat = std::move(flat)](Frame& f) -> double {
    const int64_t i = flat(f);
    if (i < 0) return 0.0;
    const double v = f.buffers[slot].Get(i);
    return t == bt ? v : RoundToDtype(t, v);
  });
}

absl::StatusOr<IntFn> Compiler::IntBinary(const ir::BinaryNode* op) {
  using ir::BinaryOp;
  const DataType t = op->dtype;
  const DataType operand = op->a.dtype();
  if (is_float(operand)) {
    INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(op->a));
    INTERP_ASSIGN_OR_RETURN(FloatFn b, Float(op->b));
    switch (op->op) {
      case BinaryOp::kEQ:
        return MakeCompare(a, b, [](double x, double y) { return x == y; });
      case BinaryOp::kNE:
        return MakeCompare(a, b, [](double x, double y) { return x != y; });
      case BinaryOp::kLT:
        return MakeCompare(a, b, [](double x, double y) { return x < y; });
      case BinaryOp::kLE:
        return MakeCompare(a, b, [](double x, double y) { return x <= y; });
      case BinaryOp::kGT:
        return MakeCompare(a, b, [](double x, double y) { return x > y; });
      case BinaryOp::kGE:
        return MakeCompare(a, b, [](double x, double y) { return x >= y; });
      default:
        return Error(
            absl::StatusCode::kInvalidArgument,
            absl::StrCat("'", ir::BinaryOpName(op->op),
                         "' of float operands cannot give ", DtypeName(t)));
    }
  }
  INTERP_ASSIGN_OR_RETURN(IntFn a, Int(op->a));
  INTERP_ASSIGN_OR_RETURN(IntFn b, Int(op->b));
  const Site site = site_;
  const int bits = dtype_bits(operand);
  switch (op->op) {
    case BinaryOp::kAdd:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(U(x) + U(y));
      });
    case BinaryOp::kSub:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(U(x) - U(y));
      });
    case BinaryOp::kMul:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(U(x) * U(y));
      });
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
    case BinaryOp::kCeilDiv: {
      const BinaryOp kind = op->op;
      return IntFn([t, a, b, site, kind](Frame& f) -> int64_t {
        const int64_t x = a(f);
        const int64_t y = b(f);
        if (y == 0) {
          if (!f.failed) {
            Fail(f, site, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("integer ", ir::BinaryOpName(kind), " by zero (",
                              x, " ", ir::BinaryOpName(kind), " 0)"));
          }
          return 0;
        }
        if (kind == BinaryOp::kDiv) return WrapInt(t, ir::FloorDiv(x, y));
        if (kind == BinaryOp::kMod) return WrapInt(t, ir::FloorMod(x, y));
        return WrapInt(
            t,
            static_cast<int64_t>(
                U(0) - U(ir::FloorDiv(static_cast<int64_t>(U(0) - U(x)), y))));
      });
    }
    case BinaryOp::kMin:
      return MakeIntBinary(t, a, b,
                           [](int64_t x, int64_t y) { return std::min(x, y); });
    case BinaryOp::kMax:
      return MakeIntBinary(t, a, b,
                           [](int64_t x, int64_t y) { return std::max(x, y); });
    case BinaryOp::kEQ:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x == y; });
    case BinaryOp::kNE:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x != y; });
    case BinaryOp::kLT:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x < y; });
    case BinaryOp::kLE:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x <= y; });
    case BinaryOp::kGT:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x > y; });
    case BinaryOp::kGE:
      return MakeIntCompare(a, b, [](int64_t x, int64_t y) { return x >= y; });
    case BinaryOp::kAnd:  // short-circuit, as the generated C++ does
      return IntFn([a, b](Frame& f) -> int64_t { return a(f) && b(f); });
    case BinaryOp::kOr:
      return IntFn([a, b](Frame& f) -> int64_t { return a(f) || b(f); });
    case BinaryOp::kBitAnd:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) { return x & y; });
    case BinaryOp::kBitOr:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) { return x | y; });
    case BinaryOp::kBitXor:
      return MakeIntBinary(t, a, b, [](int64_t x, int64_t y) { return x ^ y; });
    case BinaryOp::kShl:
    case BinaryOp::kShr: {
      const bool left = op->op == BinaryOp::kShl;
      return IntFn([t, a, b, site, bits, left](Frame& f) -> int64_t {
        const int64_t x = a(f);
        const int64_t y = b(f);
        if (y < 0 || y >= bits) {
          if (!f.failed) {
            Fail(f, site, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("shift by ", y, " of a ", bits, "-bit integer"));
          }
          return 0;
        }
        // Unsigned values are held zero-extended, so >> is logical for
        // them and arithmetic for signed ones.
        return WrapInt(t, left ? static_cast<int64_t>(U(x) << y) : x >> y);
      });
    }
    case BinaryOp::kPow:
      break;
  }
  return Error(absl::StatusCode::kInvalidArgument,
               absl::StrCat("'", ir::BinaryOpName(op->op), "' on ",
                            DtypeName(operand), " operands"));
}

absl::StatusOr<FloatFn> Compiler::FloatBinary(const ir::BinaryNode* op) {
  using ir::BinaryOp;
  const DataType t = op->dtype;
  INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(op->a));
  INTERP_ASSIGN_OR_RETURN(FloatFn b, Float(op->b));
  switch (op->op) {
    case BinaryOp::kAdd:
      return MakeFloatBinary(t, a, b, [](double x, double y) { return x + y; });
    case BinaryOp::kSub:
      return MakeFloatBinary(t, a, b, [](double x, double y) { return x - y; });
    case BinaryOp::kMul:
      return MakeFloatBinary(t, a, b, [](double x, double y) { return x * y; });
    case BinaryOp::kDiv:
      return MakeFloatBinary(t, a, b, [](double x, double y) { return x / y; });
    case BinaryOp::kMod:
      return MakeFloatBinary(
          t, a, b, [](double x, double y) { return std::fmod(x, y); });
    case BinaryOp::kMin:
      return MakeFloatBinary(t, a, b, MinNum);
    case BinaryOp::kMax:
      return MakeFloatBinary(t, a, b, MaxNum);
    case BinaryOp::kPow:
      return MakeFloatBinary(t, a, b,
                             [](double x, double y) { return std::pow(x, y); });
    default:
      break;
  }
  return Error(absl::StatusCode::kInvalidArgument,
               absl::StrCat("'", ir::BinaryOpName(op->op), "' on ",
                            DtypeName(t), " operands"));
}

absl::StatusOr<FloatFn> Compiler::FloatMath(const ir::MathNode* op) {
  using ir::MathOp;
  const DataType t = op->dtype;
  INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(op->a));
  switch (op->op) {
    case MathOp::kExp:
      return MakeFloatUnary(t, a, [](double x) { return std::exp(x); });
    case MathOp::kExp2:
      return MakeFloatUnary(t, a, [](double x) { return std::exp2(x); });
    case MathOp::kLog:
      return MakeFloatUnary(t, a, [](double x) { return std::log(x); });
    case MathOp::kLog2:
      return MakeFloatUnary(t, a, [](double x) { return std::log2(x); });
    case MathOp::kSqrt:
      return MakeFloatUnary(t, a, [](double x) { return std::sqrt(x); });
    case MathOp::kRsqrt:
      return MakeFloatUnary(t, a, [](double x) { return 1.0 / std::sqrt(x); });
    case MathOp::kAbs:
      return MakeFloatUnary(t, a, [](double x) { return std::fabs(x); });
    case MathOp::kTanh:
      return MakeFloatUnary(t, a, [](double x) { return std::tanh(x); });
    case MathOp::kSigmoid:
      return MakeFloatUnary(
          t, a, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case MathOp::kSin:
      return MakeFloatUnary(t, a, [](double x) { return std::sin(x); });
    case MathOp::kCos:
      return MakeFloatUnary(t, a, [](double x) { return std::cos(x); });
    case MathOp::kFloor:
      return MakeFloatUnary(t, a, [](double x) { return std::floor(x); });
    case MathOp::kCeil:
      return MakeFloatUnary(t, a, [](double x) { return std::ceil(x); });
    case MathOp::kRound:
      return MakeFloatUnary(t, a, [](double x) { return std::nearbyint(x); });
    case MathOp::kErf:
      return MakeFloatUnary(t, a, [](double x) { return std::erf(x); });
  }
  return Error(absl::StatusCode::kInternal, "unknown math op");
}

absl::StatusOr<IntFn> Compiler::Int(const ir::Expr& e) {
  if (!e.defined()) {
    return Error(absl::StatusCode::kInvalidArgument, "undefined expression");
  }
  const DataType t = e.dtype();
  if (!IsIntLike(t)) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("expected an integer or bool expression, got ",
                              DtypeName(t)));
  }
  switch (e->kind) {
    case ir::ExprKind::kIntImm: {
      const int64_t v = WrapInt(t, e.As<ir::IntImmNode>()->value);
      return IntFn([v](Frame&) { return v; });
    }
    case ir::ExprKind::kVar: {
      INTERP_ASSIGN_OR_RETURN(const int slot, VarSlot(e.As<ir::VarNode>()));
      return IntFn([slot](Frame& f) { return f.vars[slot]; });
    }
    case ir::ExprKind::kBinary:
      return IntBinary(e.As<ir::BinaryNode>());
    case ir::ExprKind::kUnary: {
      const auto* u = e.As<ir::UnaryNode>();
      INTERP_ASSIGN_OR_RETURN(IntFn a, Int(u->a));
      switch (u->op) {
        case ir::UnaryOp::kNeg:
          return IntFn([t, a](Frame& f) {
            return WrapInt(t, static_cast<int64_t>(U(0) - U(a(f))));
          });
        case ir::UnaryOp::kNot:
          return IntFn([a](Frame& f) -> int64_t { return !a(f); });
        case ir::UnaryOp::kBitNot:
          return IntFn([t, a](Frame& f) { return WrapInt(t, ~a(f)); });
      }
      break;
    }
    case ir::ExprKind::kSelect: {
      const auto* s = e.As<ir::SelectNode>();
      INTERP_ASSIGN_OR_RETURN(IntFn c, Int(s->cond));
      INTERP_ASSIGN_OR_RETURN(IntFn a, Int(s->true_value));
      INTERP_ASSIGN_OR_RETURN(IntFn b, Int(s->false_value));
      return IntFn([c, a, b](Frame& f) { return c(f) ? a(f) : b(f); });
    }
    case ir::ExprKind::kCast: {
      const auto* c = e.As<ir::CastNode>();
      if (is_float(c->value.dtype())) {
        INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(c->value));
        return IntFn([t, a](Frame& f) { return FloatToInt(t, a(f)); });
      }
      INTERP_ASSIGN_OR_RETURN(IntFn a, Int(c->value));
      return IntFn([t, a](Frame& f) { return WrapInt(t, a(f)); });
    }
    case ir::ExprKind::kMath: {
      const auto* m = e.As<ir::MathNode>();
      if (m->op == ir::MathOp::kAbs) {
        INTERP_ASSIGN_OR_RETURN(IntFn a, Int(m->a));
        return IntFn([t, a](Frame& f) {
          const int64_t x = a(f);
          return WrapInt(t, x < 0 ? static_cast<int64_t>(U(0) - U(x)) : x);
        });
      }
      return Error(absl::StatusCode::kInvalidArgument,
                   absl::StrCat(ir::MathOpName(m->op), " of an integer"));
    }
    case ir::ExprKind::kLoad:
      return IntLoad(e.As<ir::LoadNode>());
    case ir::ExprKind::kCall:
      if (const ir::Expr* v = ir::AsBitcast(e)) return IntBitcast(*v, t);
      return Error(absl::StatusCode::kUnimplemented,
                   absl::StrCat("the interpreter does not know intrinsic '",
                                e.As<ir::CallNode>()->name, "'"));
    case ir::ExprKind::kFloatImm:
      break;
  }
  return Error(absl::StatusCode::kInternal, "malformed integer expression");
}

absl::StatusOr<FloatFn> Compiler::Float(const ir::Expr& e) {
  if (!e.defined()) {
    return Error(absl::StatusCode::kInvalidArgument, "undefined expression");
  }
  const DataType t = e.dtype();
  if (!is_float(t)) {
    return Error(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat("expected a float expression, got ", DtypeName(t)));
  }
  switch (e->kind) {
    case ir::ExprKind::kFloatImm: {
      const double v = RoundToDtype(t, e.As<ir::FloatImmNode>()->value);
      return FloatFn([v](Frame&) { return v; });
    }
    case ir::ExprKind::kBinary:
      return FloatBinary(e.As<ir::BinaryNode>());
    case ir::ExprKind::kUnary: {
      const auto* u = e.As<ir::UnaryNode>();
      if (u->op != ir::UnaryOp::kNeg) break;
      INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(u->a));
      return FloatFn([a](Frame& f) { return -a(f); });
    }
    case ir::ExprKind::kSelect: {
      const auto* s = e.As<ir::SelectNode>();
      INTERP_ASSIGN_OR_RETURN(IntFn c, Int(s->cond));
      INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(s->true_value));
      INTERP_ASSIGN_OR_RETURN(FloatFn b, Float(s->false_value));
      return FloatFn([c, a, b](Frame& f) { return c(f) ? a(f) : b(f); });
    }
    case ir::ExprKind::kCast: {
      const auto* c = e.As<ir::CastNode>();
      if (is_float(c->value.dtype())) {
        INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(c->value));
        if (t == DataType::kF64) return a;
        return FloatFn([t, a](Frame& f) { return RoundToDtype(t, a(f)); });
      }
      INTERP_ASSIGN_OR_RETURN(IntFn a, Int(c->value));
      return FloatFn([t, a](Frame& f) {
        return RoundToDtype(t, static_cast<double>(a(f)));
      });
    }
    case ir::ExprKind::kMath:
      return FloatMath(e.As<ir::MathNode>());
    case ir::ExprKind::kLoad:
      return FloatLoad(e.As<ir::LoadNode>());
    case ir::ExprKind::kVar: {
      // Float variables are lets (Compiler::Let): their slot holds the bits.
      INTERP_ASSIGN_OR_RETURN(const int slot, VarSlot(e.As<ir::VarNode>()));
      return FloatFn(
          [slot](Frame& f) { return std::bit_cast<double>(f.vars[slot]); });
    }
    case ir::ExprKind::kCall:
      if (const ir::Expr* v = ir::AsBitcast(e)) return FloatBitcast(*v, t);
      return Error(absl::StatusCode::kUnimplemented,
                   absl::StrCat("the interpreter does not know intrinsic '",
                                e.As<ir::CallNode>()->name, "'"));
    case ir::ExprKind::kIntImm:
      break;
  }
  return Error(absl::StatusCode::kInternal, "malformed float expression");
}

absl::StatusOr<FloatFn> Compiler::Double(const ir::Expr& e) {
  if (e.defined() && !is_float(e.dtype())) {
    INTERP_ASSIGN_OR_RETURN(IntFn a, Int(e));
    return FloatFn([a](Frame& f) { return static_cast<double>(a(f)); });
  }
  return Float(e);
}

}  // namespace tessel::interp
