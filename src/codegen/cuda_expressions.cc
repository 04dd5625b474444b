// Expressions, and the intrinsics that are expressions (thread index,
// shared addresses, references, warp reductions, packing, descriptors).
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/cuda_codegen.h"
#include "src/codegen/cuda_printer.h"
#include "src/ir/arith/bounds.h"
#include "src/ir/op.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen {
namespace {

// __nv_fp8_e4m3 / __nv_fp8_e5m2 have no arithmetic and only explicit
// conversions: fp8 values are computed in f32 and rounded once on the way
// back, as the interpreter rounds each result to the dtype.
bool IsFp8(DataType t) {
  return t == DataType::kF8E4M3 || t == DataType::kF8E5M2;
}
std::string AsF32(const std::string& x) {
  return absl::StrCat("static_cast<float>(", x, ")");
}

}  // namespace

std::string Printer::Expr(const ir::Expr& e) {
  using ir::BinaryOp;
  switch (e->kind) {
    case ir::ExprKind::kIntImm: {
      int64_t v = e.As<ir::IntImmNode>()->value;
      switch (e.dtype()) {
        case DataType::kBool:
          return v ? "true" : "false";
        case DataType::kI64:
          // -2^63 has no literal: 9223372036854775808 does not fit.
          if (v == std::numeric_limits<int64_t>::min()) {
            return "(-9223372036854775807ll - 1)";
          }
          return absl::StrCat(v, "ll");
        case DataType::kU32:
          return absl::StrCat(v, "u");
        case DataType::kI32:
          // -2^31 as a literal is 2147483648 negated: a long long, which
          // makes max(INT_MIN, i) ambiguous.
          if (v == std::numeric_limits<int32_t>::min()) {
            return "(-2147483647 - 1)";
          }
          return v < 0 ? absl::StrCat("(", v, ")") : absl::StrCat(v);
        default:
          return absl::StrCat("static_cast<", CudaType(e.dtype()), ">(", v,
                              ")");
      }
    }
    case ir::ExprKind::kFloatImm: {
      double v = e.As<ir::FloatImmNode>()->value;
      std::string f;
      const bool f64 = e.dtype() == DataType::kF64;
      if (std::isinf(v) && f64) {
        f = v > 0 ? "__longlong_as_double(0x7ff0000000000000ll)"
                  : "__longlong_as_double(0xfff0000000000000ull)";
      } else if (std::isnan(v) && f64) {
        f = "__longlong_as_double(0x7fffffffffffffffll)";
      } else if (std::isinf(v)) {
        f = v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      } else if (std::isnan(v)) {
        f = "__int_as_float(0x7fffffff)";
      } else {
        std::ostringstream os;
        os.precision(17);
        os << v;
        f = os.str();
        if (f.find_first_of(".eE") == std::string::npos) f += ".0";
        if (e.dtype() != DataType::kF64) f += "f";
      }
      if (e.dtype() == DataType::kF32 || e.dtype() == DataType::kF64) {
        return std::isinf(v) || v < 0 ? absl::StrCat("(", f, ")") : f;
      }
      return absl::StrCat("static_cast<", CudaType(e.dtype()), ">(", f, ")");
    }
    case ir::ExprKind::kVar:
      return VarName(e.As<ir::VarNode>());
    case ir::ExprKind::kBinary:
      return Binary(*e.As<ir::BinaryNode>());
    case ir::ExprKind::kUnary: {
      const auto* u = e.As<ir::UnaryNode>();
      const char* op = u->op == ir::UnaryOp::kNeg   ? "-"
                       : u->op == ir::UnaryOp::kNot ? "!"
                                                    : "~";
      if (IsFp8(u->a.dtype())) {
        return absl::StrCat("static_cast<", CudaType(u->a.dtype()), ">(", op,
                            AsF32(Expr(u->a)), ")");
      }
      return absl::StrCat("(", op, Expr(u->a), ")");
    }
    case ir::ExprKind::kSelect: {
      const auto* s = e.As<ir::SelectNode>();
      return absl::StrCat("(", Expr(s->cond), " ? ", Expr(s->true_value), " : ",
                          Expr(s->false_value), ")");
    }
    case ir::ExprKind::kCast: {
      const auto* c = e.As<ir::CastNode>();
      DataType from = c->value.dtype(), to = e.dtype();
      bool half_like = from == DataType::kF16 || from == DataType::kBF16 ||
                       to == DataType::kF16 || to == DataType::kBF16 ||
                       (IsFp8(from) && IsFp8(to));
      if (half_like && from != DataType::kF32 && to != DataType::kF32) {
        return absl::StrCat("static_cast<", CudaType(to),
                            ">(static_cast<float>(", Expr(c->value), "))");
      }
      return absl::StrCat("static_cast<", CudaType(to), ">(", Expr(c->value),
                          ")");
    }
    case ir::ExprKind::kMath:
      return Math(*e.As<ir::MathNode>());
    case ir::ExprKind::kCall:
      return Call(*e.As<ir::CallNode>());
    case ir::ExprKind::kLoad:
      return Access(*e.As<ir::LoadNode>());
  }
  return "/*?*/";
}

std::string Printer::Access(const ir::LoadNode& l) {
  return Access(l.buffer, l.indices);
}

std::optional<std::vector<int64_t>> FlatLocalExtents(const ir::BufferNode& b) {
  if (b.scope != ir::Scope::kLocal || b.shape.size() < 2) return std::nullopt;
  std::vector<int64_t> extents;
  for (const ir::Expr& d : b.shape) {
    std::optional<int64_t> e = ir::AsConstInt(d);
    if (!e) return std::nullopt;
    extents.push_back(*e);
  }
  return extents;
}

namespace {

// The row-major offset of the element (or sub-array) at `idx`.
int64_t FlatOffset(const std::vector<int64_t>& extents,
                   const std::vector<int64_t>& idx) {
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k)
    offset = offset * extents[k] + (k < idx.size() ? idx[k] : 0);
  return offset;
}

// Constant indices as integers; nullopt if one is not constant.
std::optional<std::vector<int64_t>> ConstIndices(
    const std::vector<ir::Expr>& idx) {
  std::vector<int64_t> out;
  for (const ir::Expr& i : idx) {
    std::optional<int64_t> c = ir::AsConstInt(i);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

// The row-major offset of the element at the indices `idx` then `more`
// (as many as `extents`); nullopt if one of `idx` is not constant.
std::optional<int64_t> ConstFlatOffset(const std::vector<int64_t>& extents,
                                       const std::vector<ir::Expr>& idx,
                                       absl::Span<const int64_t> more) {
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k) {
    int64_t i;
    if (k < idx.size()) {
      const auto* c = idx[k].As<ir::IntImmNode>();
      if (c == nullptr) return std::nullopt;
      i = c->value;
    } else {
      i = more[k - idx.size()];
    }
    offset = offset * extents[k] + i;
  }
  return offset;
}

}  // namespace

// A flat local array's element is name[row-major offset] (a constant where
// the indices are); fewer indices than its rank name the sub-array there,
// as the declared array would: (*reinterpret_cast<T(*)[4]>(&name[offset])).
std::string Printer::Access(const ir::Buffer& b,
                            const std::vector<ir::Expr>& idx) {
  std::string name = BufName(b.get());
  if (ir::IsScalarVar(b->scope)) return name;
  const std::vector<int64_t>* extents = FlatExtents(b.get());
  if (extents == nullptr || idx.empty()) {
    if (idx.size() == 1 && !rebases_.empty()) {
      if (std::optional<std::string> r = Rebased(*b.get(), idx[0])) return *r;
    }
    std::string out = name;
    for (const ir::Expr& i : idx) absl::StrAppend(&out, "[", Expr(i), "]");
    return out;
  }
  std::string offset;
  if (std::optional<std::vector<int64_t>> c = ConstIndices(idx)) {
    offset = absl::StrCat(FlatOffset(*extents, *c));  // no IR to build
  } else {
    ir::Expr e = idx[0];
    for (size_t k = 1; k < extents->size(); ++k) {
      e = e * ir::Expr(static_cast<int>((*extents)[k]));
      if (k < idx.size()) e = e + idx[k];
    }
    offset = Expr(e);
  }
  std::string element = absl::StrCat(name, "[", offset, "]");
  if (idx.size() == extents->size()) return element;
  std::string sub;
  for (size_t k = idx.size(); k < extents->size(); ++k)
    absl::StrAppend(&sub, "[", (*extents)[k], "]");
  return absl::StrCat("(*reinterpret_cast<", CudaType(b->dtype), "(*)", sub,
                      ">(&", element, "))");
}

std::optional<std::pair<const ir::BufferNode*, int64_t>> Printer::FlatElement(
    const ir::Expr& ref, absl::Span<const int64_t> more) {
  const auto* l = ref.As<ir::CallNode>()->args[0].As<ir::LoadNode>();
  const std::vector<int64_t>* extents = FlatExtents(l->buffer.get());
  if (extents && l->indices.size() + more.size() == extents->size()) {
    if (std::optional<int64_t> offset =
            ConstFlatOffset(*extents, l->indices, more)) {
      return std::make_pair(l->buffer.get(), *offset);
    }
  }
  return std::nullopt;
}

std::string Printer::Element(const ir::Expr& ref,
                             absl::Span<const int64_t> more) {
  if (auto e = FlatElement(ref, more)) {
    return absl::StrCat(BufName(e->first), "[", e->second, "]");
  }
  const auto* l = ref.As<ir::CallNode>()->args[0].As<ir::LoadNode>();
  std::vector<ir::Expr> idx = l->indices;
  for (int64_t i : more) idx.push_back(ir::Expr(static_cast<int>(i)));
  return Access(l->buffer, idx);
}

const std::vector<int64_t>* Printer::FlatExtents(const ir::BufferNode* b) {
  if (b->scope != ir::Scope::kLocal || b->shape.size() < 2) return nullptr;
  auto it = flat_extents_.find(b);
  if (it == flat_extents_.end())
    it = flat_extents_.emplace(b, FlatLocalExtents(*b)).first;
  return it->second ? &*it->second : nullptr;
}

std::string Printer::Binary(const ir::BinaryNode& b) {
  using ir::BinaryOp;
  std::string x = Expr(b.a), y = Expr(b.b);
  const bool fp8 = IsFp8(b.a.dtype());
  if (fp8) {
    x = AsF32(x);
    y = AsF32(y);
  }
  bool ints = !IsFloat(b.a.dtype());
  // u32: floor division is C's (and tl::floordiv has no u32 overload).
  const bool u32 = b.a.dtype() == DataType::kU32;
  auto simple_div = [&]() {
    if (u32) return true;
    auto c = ir::AsConstInt(b.b);
    return c && *c > 0 && ir::arith::ProvablyNonNegative(b.a);
  };
  auto text = [&]() -> std::string {
    switch (b.op) {
      case BinaryOp::kDiv:
        if (ints && !simple_div())
          return absl::StrCat("tl::floordiv(", x, ", ", y, ")");
        return absl::StrCat("(", x, " / ", y, ")");
      case BinaryOp::kMod:
        if (!ints) return absl::StrCat("fmodf(", x, ", ", y, ")");
        if (!simple_div())
          return absl::StrCat("tl::floormod(", x, ", ", y, ")");
        return absl::StrCat("(", x, " % ", y, ")");
      // Floats: the prelude's order for every float type (CUDA's min / max
      // have no f16 / bf16 overloads, and ambiguous conversions).
      case BinaryOp::kMin:
        return absl::StrCat(ints ? "min(" : "tl::min(", x, ", ", y, ")");
      case BinaryOp::kMax:
        return absl::StrCat(ints ? "max(" : "tl::max(", x, ", ", y, ")");
      case BinaryOp::kCeilDiv:
        if (u32) {  // x + y - 1 could wrap
          return absl::StrCat("(", x, " / ", y, " + (", x, " % ", y,
                              " != 0u))");
        }
        if (simple_div())
          return absl::StrCat("((", x, " + ", y, " - 1) / ", y, ")");
        return absl::StrCat("(-tl::floordiv(-(", x, "), ", y, "))");
      case BinaryOp::kPow: {
        const DataType t = b.a.dtype();
        if (t == DataType::kF16 || t == DataType::kBF16) {  // back to t
          return absl::StrCat("static_cast<", CudaType(t), ">(powf(", AsF32(x),
                              ", ", AsF32(y), "))");
        }
        return absl::StrCat(t == DataType::kF64 ? "pow(" : "powf(", x, ", ", y,
                            ")");
      }
      default:
        return absl::StrCat("(", x, " ", ir::BinaryOpName(b.op), " ", y, ")");
    }
  };
  const std::string r = text();
  if (!fp8 || ir::IsComparison(b.op)) return r;
  return absl::StrCat("static_cast<", CudaType(b.dtype), ">(", r, ")");
}

std::string Printer::Math(const ir::MathNode& m) {
  DataType t = m.dtype;
  std::string x = Expr(m.a);
  if (!IsFloat(t)) {
    // abs of unsigned is the value (abs(unsigned) is ambiguous).
    if (m.op == ir::MathOp::kAbs && !is_unsigned_int(t))
      return absl::StrCat("abs(", x, ")");
    return x;
  }
  bool dbl = t == DataType::kF64;
  if (!dbl && t != DataType::kF32)
    x = absl::StrCat("static_cast<float>(", x, ")");
  std::string f;
  auto fn = [&](const char* s) {
    return absl::StrCat(s, dbl ? "" : "f", "(", x, ")");
  };
  switch (m.op) {
    case ir::MathOp::kExp:
      f = fn("exp");
      break;
    case ir::MathOp::kExp2:
      // f32: one ex2.approx.ftz (MUFU). exp2f is the same 2-ulp
      // instruction plus a fix-up for denormal results, which the
      // softmax-style uses of exp2 never need.
      f = dbl ? fn("exp2") : absl::StrCat("tl::exp2_approx(", x, ")");
      break;
    case ir::MathOp::kLog:
      f = fn("log");
      break;
    case ir::MathOp::kLog2:
      f = fn("log2");
      break;
    case ir::MathOp::kSqrt:
      f = fn("sqrt");
      break;
    case ir::MathOp::kRsqrt:
      f = fn("rsqrt");
      break;
    case ir::MathOp::kAbs:
      f = absl::StrCat(dbl ? "fabs(" : "fabsf(", x, ")");
      break;
    case ir::MathOp::kTanh:
      f = fn("tanh");
      break;
    case ir::MathOp::kSigmoid:
      f = absl::StrCat(dbl ? "(1.0 / (1.0 + exp(-" : "(1.0f / (1.0f + expf(-",
                       x, ")))");
      break;
    case ir::MathOp::kSin:
      f = fn("sin");
      break;
    case ir::MathOp::kCos:
      f = fn("cos");
      break;
    case ir::MathOp::kFloor:
      f = fn("floor");
      break;
    case ir::MathOp::kCeil:
      f = fn("ceil");
      break;
    case ir::MathOp::kRound:
      f = fn("rint");
      break;
    case ir::MathOp::kErf:
      f = fn("erf");
      break;
  }
  if (!dbl && t != DataType::kF32)
    return absl::StrCat("static_cast<", CudaType(t), ">(", f, ")");
  return f;
}

// CUDA's reinterpreting intrinsics; 16-bit values pass through short.
std::string Printer::Bitcast(DataType from, DataType to, std::string v) {
  using D = DataType;
  auto short_of = [](D t, const std::string& x) {
    if (t == D::kF16) return absl::StrCat("__half_as_short(", x, ")");
    if (t == D::kBF16) return absl::StrCat("__bfloat16_as_short(", x, ")");
    return x;
  };
  switch (to) {
    case D::kF16:
      return absl::StrCat("__short_as_half(", short_of(from, v), ")");
    case D::kBF16:
      return absl::StrCat("__short_as_bfloat16(", short_of(from, v), ")");
    case D::kI16:
      return short_of(from, v);
    case D::kF32:
      return absl::StrCat(
          from == D::kU32 ? "__uint_as_float(" : "__int_as_float(", v, ")");
    default:
      if (from == D::kF32) {
        return absl::StrCat(
            to == D::kU32 ? "__float_as_uint(" : "__float_as_int(", v, ")");
      }
      return absl::StrCat("static_cast<", CudaType(to), ">(", v, ")");
  }
}

std::string Printer::Call(const ir::CallNode& c) {
  using I = passes::Intrinsic;
  auto args = [&] {
    std::vector<std::string> out;
    for (const ir::Expr& a : c.args) out.push_back(Expr(a));
    return absl::StrJoin(out, ", ");
  };
  std::optional<I> id = passes::IntrinsicOf(c);
  if (!id) return absl::StrCat(c.name, "(", args(), ")");
  switch (*id) {
    case I::kThreadIdx:
      return "static_cast<int>(threadIdx.x)";
    case I::kGridDimX:
      return "static_cast<int>(gridDim.x)";
    case I::kClusterRank:
      return "static_cast<int>(tl::cluster_block_rank())";
    case I::kSharedAddr: {
      const auto* l = c.args[0].As<ir::LoadNode>();
      int eb = dtype_bytes(l->buffer->dtype);
      return absl::StrCat("(", BufName(l->buffer.get()),
                          "_addr + static_cast<tl::u32>(", Expr(l->indices[0]),
                          ")", eb == 1 ? "" : absl::StrCat(" * ", eb, "u"),
                          ")");
    }
    case I::kRef:
      return Access(*c.args[0].As<ir::LoadNode>());
    case I::kAddressOf:
      return absl::StrCat("&", Access(*c.args[0].As<ir::LoadNode>()));
    case I::kWarpReduceSum:
    case I::kWarpReduceMax:
    case I::kWarpReduceMin:
      return absl::StrCat("tl::", c.name, "<", Expr(c.args[0]), ">(",
                          Expr(c.args[1]), ")");
    case I::kWarpScanExclusiveSum:
    case I::kWarpGroupLast:
      return absl::StrCat("tl::", c.name, "<", Expr(c.args[0]), ", ",
                          ir::IsConstInt(c.args[1], 1) ? "true" : "false", ">(",
                          Expr(c.args[2]), ")");
    case I::kWarpUniform:
    case I::kPackB16x2:
    case I::kWgmmaDescSw128:
    case I::kWgmmaDescAdd:
      return absl::StrCat("tl::", c.name, "(", args(), ")");
    case I::kBitcast:
      return Bitcast(c.args[0].dtype(), c.dtype, Expr(c.args[0]));
    default:
      error_ =
          absl::StrCat("codegen: intrinsic ", c.name, " used as an expression");
      return "";
  }
}

}  // namespace tessel::codegen
