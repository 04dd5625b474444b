#include "src/codegen/cuda_codegen.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "src/codegen/prelude.h"
#include "src/ir/arith/bounds.h"
#include "src/ir/op.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"

namespace tessel::codegen {

const char* CudaType(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "bool";
    case DataType::kI8:
      return "signed char";
    case DataType::kU8:
      return "unsigned char";
    case DataType::kI16:
      return "short";
    case DataType::kI32:
      return "int";
    case DataType::kU32:
      return "tl::u32";
    case DataType::kI64:
      return "long long";
    case DataType::kF16:
      return "tl::f16";
    case DataType::kBF16:
      return "tl::bf16";
    case DataType::kF32:
      return "float";
    case DataType::kF64:
      return "double";
    case DataType::kF8E4M3:
      return "__nv_fp8_e4m3";
    case DataType::kF8E5M2:
      return "__nv_fp8_e5m2";
  }
  return "int";
}

namespace {

constexpr const char* kHelpers =
    R"(// Integer floor division and modulo, as the tile IR defines them.
__device__ __forceinline__ int tessel_floordiv(int a, int b) {
  const int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int tessel_floormod(int a, int b) {
  const int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ long long tessel_floordiv(long long a, long long b) {
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long tessel_floormod(long long a, long long b) {
  const long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ void tessel_atomic_min(float* addr, float v) {
  if (v >= 0.0f) {
    atomicMin(reinterpret_cast<int*>(addr), __float_as_int(v));
  } else {
    atomicMax(reinterpret_cast<unsigned int*>(addr), __float_as_uint(v));
  }
}
)";

bool IsFloat(DataType t) { return is_float(t); }

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  return out;
}

class Printer {
 public:
  explicit Printer(const passes::LoweringState& st) : st_(st) {
    for (const char* reserved :
         {"smem",     "smem_base", "tl",        "int",      "float",
          "double",   "bool",      "min",       "max",      "threadIdx",
          "blockIdx", "printf",    "half",      "char",     "short",
          "long",     "unsigned",  "signed",    "const",    "auto",
          "for",      "if",        "else",      "return",   "void",
          "new",      "delete",    "this",      "default",  "case",
          "do",       "while",     "switch",    "break",    "continue",
          "goto",     "static",    "extern",    "volatile", "inline",
          "struct",   "class",     "union",     "enum",     "typedef",
          "sizeof",   "namespace", "template",  "typename", "operator",
          "public",   "private",   "protected", "virtual",  "friend",
          "register", "true",      "false",     "nullptr",  "using",
          "try",      "catch",     "throw",     "asm",      "mutable",
          "explicit", "export",    "float2",    "float4",   "uint4",
          "uint2",    "dim3",      "warpSize",  "blockDim", "gridDim",
          "std"}) {
      used_.insert(reserved);
    }
  }

  std::string Name(const void* key, const std::string& want) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base = Sanitize(want);
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = absl::StrCat(base, "_", i);
    used_.insert(name);
    names_[key] = name;
    return name;
  }
  std::string VarName(const ir::VarNode* v) { return Name(v, v->name); }
  std::string BufName(const ir::BufferNode* b) { return Name(b, b->name); }

  // ------------------------------------------------------------ expressions
  std::string Expr(const ir::Expr& e) {
    using ir::BinaryOp;
    switch (e->kind) {
      case ir::ExprKind::kIntImm: {
        int64_t v = e.As<ir::IntImmNode>()->value;
        switch (e.dtype()) {
          case DataType::kBool:
            return v ? "true" : "false";
          case DataType::kI64:
            return absl::StrCat(v, "ll");
          case DataType::kU32:
            return absl::StrCat(v, "u");
          case DataType::kI32:
            return v < 0 ? absl::StrCat("(", v, ")") : absl::StrCat(v);
          default:
            return absl::StrCat("static_cast<", CudaType(e.dtype()), ">(", v,
                                ")");
        }
      }
      case ir::ExprKind::kFloatImm: {
        double v = e.As<ir::FloatImmNode>()->value;
        std::string f;
        if (std::isinf(v)) {
          f = v > 0 ? "__int_as_float(0x7f800000)"
                    : "__int_as_float(0xff800000)";
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
        return absl::StrCat("(", op, Expr(u->a), ")");
      }
      case ir::ExprKind::kSelect: {
        const auto* s = e.As<ir::SelectNode>();
        return absl::StrCat("(", Expr(s->cond), " ? ", Expr(s->true_value),
                            " : ", Expr(s->false_value), ")");
      }
      case ir::ExprKind::kCast: {
        const auto* c = e.As<ir::CastNode>();
        DataType from = c->value.dtype(), to = e.dtype();
        bool half_like = from == DataType::kF16 || from == DataType::kBF16 ||
                         to == DataType::kF16 || to == DataType::kBF16;
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

  std::string Access(const ir::LoadNode& l) {
    return Access(l.buffer, l.indices);
  }
  std::string Access(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    std::string name = BufName(b.get());
    if (b->scope == ir::Scope::kVar) return name;
    std::string out = name;
    for (const ir::Expr& i : idx) absl::StrAppend(&out, "[", Expr(i), "]");
    return out;
  }

  std::string Binary(const ir::BinaryNode& b) {
    using ir::BinaryOp;
    std::string x = Expr(b.a), y = Expr(b.b);
    bool ints = !IsFloat(b.a.dtype());
    auto simple_div = [&]() {
      auto c = ir::AsConstInt(b.b);
      return c && *c > 0 && ir::arith::ProvablyNonNegative(b.a);
    };
    switch (b.op) {
      case BinaryOp::kDiv:
        if (ints && !simple_div())
          return absl::StrCat("tessel_floordiv(", x, ", ", y, ")");
        return absl::StrCat("(", x, " / ", y, ")");
      case BinaryOp::kMod:
        if (!ints) return absl::StrCat("fmodf(", x, ", ", y, ")");
        if (!simple_div())
          return absl::StrCat("tessel_floormod(", x, ", ", y, ")");
        return absl::StrCat("(", x, " % ", y, ")");
      case BinaryOp::kMin:
        return absl::StrCat("min(", x, ", ", y, ")");
      case BinaryOp::kMax:
        return absl::StrCat("max(", x, ", ", y, ")");
      case BinaryOp::kCeilDiv:
        if (simple_div())
          return absl::StrCat("((", x, " + ", y, " - 1) / ", y, ")");
        return absl::StrCat("(-tessel_floordiv(-(", x, "), ", y, "))");
      case BinaryOp::kPow:
        return absl::StrCat(b.a.dtype() == DataType::kF64 ? "pow(" : "powf(", x,
                            ", ", y, ")");
      default:
        return absl::StrCat("(", x, " ", ir::BinaryOpName(b.op), " ", y, ")");
    }
  }

  std::string Math(const ir::MathNode& m) {
    DataType t = m.dtype;
    std::string x = Expr(m.a);
    if (!IsFloat(t)) {
      if (m.op == ir::MathOp::kAbs) return absl::StrCat("abs(", x, ")");
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

  std::string Call(const ir::CallNode& c) {
    const std::string& n = c.name;
    if (n == "thread_idx") return "static_cast<int>(threadIdx.x)";
    if (n == "shared_addr") {
      const auto* l = c.args[0].As<ir::LoadNode>();
      int eb = dtype_bytes(l->buffer->dtype);
      return absl::StrCat("(", BufName(l->buffer.get()),
                          "_addr + static_cast<tl::u32>(", Expr(l->indices[0]),
                          ")", eb == 1 ? "" : absl::StrCat(" * ", eb, "u"),
                          ")");
    }
    if (n == "ref") return Access(*c.args[0].As<ir::LoadNode>());
    if (n == "address_of")
      return absl::StrCat("&", Access(*c.args[0].As<ir::LoadNode>()));
    if (n.rfind("warp_reduce_", 0) == 0) {
      return absl::StrCat("tl::", n, "<", Expr(c.args[0]), ">(",
                          Expr(c.args[1]), ")");
    }
    std::vector<std::string> args;
    for (const ir::Expr& a : c.args) args.push_back(Expr(a));
    return absl::StrCat(n, "(", absl::StrJoin(args, ", "), ")");
  }

  // ------------------------------------------------------------ statements
  void Line(const std::string& s) {
    out_ << std::string(indent_ * 2, ' ') << s << "\n";
  }

  void Stmt(const ir::Stmt& s) {
    if (!s.defined()) return;
    switch (s->kind) {
      case ir::StmtKind::kSeq:
        for (const ir::Stmt& c : s.As<ir::SeqNode>()->stmts) Stmt(c);
        return;
      case ir::StmtKind::kKernel:
        Kernel(*s.As<ir::KernelNode>());
        return;
      case ir::StmtKind::kAllocate: {
        const auto* a = s.As<ir::AllocateNode>();
        const ir::BufferNode* b = a->buffer.get();
        if (b->scope == ir::Scope::kLocal) {
          std::string dims;
          for (const ir::Expr& d : b->shape)
            absl::StrAppend(&dims, "[", Expr(d), "]");
          Line(absl::StrCat(CudaType(b->dtype), " ", BufName(b), dims, ";"));
        } else if (b->scope == ir::Scope::kVar) {
          Line(absl::StrCat(CudaType(b->dtype), " ", BufName(b), ";"));
        }
        Stmt(a->body);
        return;
      }
      case ir::StmtKind::kFor: {
        const auto* f = s.As<ir::ForNode>();
        std::string v = VarName(f->var.get());
        if (f->for_kind == ir::ForKind::kUnrolled) Line("#pragma unroll");
        std::string end = ir::IsConstInt(f->min, 0) ? Expr(f->extent)
                                                    : Expr(f->min + f->extent);
        Line(absl::StrCat("for (int ", v, " = ", Expr(f->min), "; ", v, " < ",
                          end, "; ++", v, ") {"));
        Block(f->body);
        Line("}");
        return;
      }
      case ir::StmtKind::kIfThenElse: {
        const auto* i = s.As<ir::IfThenElseNode>();
        Line(absl::StrCat("if (", Expr(i->cond), ") {"));
        Block(i->then_case);
        if (i->else_case.defined()) {
          Line("} else {");
          Block(i->else_case);
        }
        Line("}");
        return;
      }
      case ir::StmtKind::kStore: {
        const auto* st = s.As<ir::StoreNode>();
        Line(absl::StrCat(Access(st->buffer, st->indices), " = ",
                          Expr(st->value), ";"));
        return;
      }
      case ir::StmtKind::kSyncThreads:
        Line("__syncthreads();");
        return;
      case ir::StmtKind::kEvaluate:
        Intrinsic(*s.As<ir::EvaluateNode>()->value.As<ir::CallNode>());
        return;
      default:
        error_ = absl::StrCat("codegen: unexpected ", ir::StmtKindName(s->kind),
                              " after lowering");
        return;
    }
  }

  void Block(const ir::Stmt& s) {
    ++indent_;
    Stmt(s);
    --indent_;
  }

  std::string Addr(const ir::Expr& load) {
    return absl::StrCat("&", Access(*load.As<ir::LoadNode>()));
  }

  static const char* VecType(int64_t bytes) {
    switch (bytes) {
      case 16:
        return "uint4";
      case 8:
        return "uint2";
      case 4:
        return "tl::u32";
      default:
        return "unsigned short";
    }
  }

  // wgmma.mma_async m64nNk16, f32 += A * B: args (type, N, A M-major or -1
  // for A in registers, B N-major, accumulator [N/8][4], A's [4] registers
  // or descriptor, B's descriptor).
  void Wgmma(const ir::CallNode& c) {
    const std::string& type = c.args[0].As<ir::CallNode>()->name;
    const int n = static_cast<int>(*ir::AsConstInt(c.args[1]));
    const int64_t trans_a = *ir::AsConstInt(c.args[2]);
    const int64_t trans_b = *ir::AsConstInt(c.args[3]);
    const std::string acc = Expr(c.args[4]), a = Expr(c.args[5]);
    const bool a_in_registers = trans_a < 0;
    const int nd = n / 2;  // accumulator registers
    std::vector<std::string> d_ops, outs, ins;
    for (int i = 0; i < nd; ++i) {
      d_ops.push_back(absl::StrCat("%", i));
      outs.push_back(
          absl::StrCat("\"+f\"(", acc, "[", i / 4, "][", i % 4, "])"));
    }
    std::string a_op;
    if (a_in_registers) {
      a_op = absl::StrCat("{%", nd, ", %", nd + 1, ", %", nd + 2, ", %", nd + 3,
                          "}");
      for (int r = 0; r < 4; ++r)
        ins.push_back(absl::StrCat("\"r\"(", a, "[", r, "])"));
    } else {
      a_op = absl::StrCat("%", nd);
      ins.push_back(absl::StrCat("\"l\"(", a, ")"));
    }
    const int b_at = nd + static_cast<int>(ins.size());
    ins.push_back(absl::StrCat("\"l\"(", Expr(c.args[6]), ")"));
    ins.push_back("\"r\"(1)");
    std::string imms = a_in_registers
                           ? absl::StrCat("1, 1, ", trans_b)
                           : absl::StrCat("1, 1, ", trans_a, ", ", trans_b);
    Line("asm volatile(");
    Line("    \"{\\n.reg .pred p;\\n\"");
    Line(absl::StrCat("    \"setp.ne.b32 p, %", b_at + 1, ", 0;\\n\""));
    Line(absl::StrCat("    \"wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.",
                      type, ".", type, " \""));
    Line(absl::StrCat("    \"{", absl::StrJoin(d_ops, ", "), "}, \""));
    Line(
        absl::StrCat("    \"", a_op, ", %", b_at, ", p, ", imms, ";\\n}\\n\""));
    Line(absl::StrCat("    : ", absl::StrJoin(outs, ", ")));
    Line(absl::StrCat("    : ", absl::StrJoin(ins, ", "), ");"));
  }

  // An empty asm that "writes" registers: the compiler keeps their reads
  // after it (the accumulators of a wgmma are final only after its wait).
  void FenceOperand(const ir::CallNode& c) {
    const std::string acc = Expr(c.args[0]);
    const int64_t n = *ir::AsConstInt(c.args[1]);
    std::vector<std::string> outs;
    for (int64_t i = 0; i < n; ++i)
      outs.push_back(
          absl::StrCat("\"+f\"(", acc, "[", i / 4, "][", i % 4, "])"));
    Line(absl::StrCat("asm volatile(\"\" : ", absl::StrJoin(outs, ", "),
                      " :: \"memory\");"));
  }

  void Intrinsic(const ir::CallNode& c) {
    const std::string& n = c.name;
    auto arg = [&](int i) { return Expr(c.args[i]); };
    if (n == "let") {
      const auto* v = c.args[0].As<ir::VarNode>();
      Line(absl::StrCat("const ", CudaType(c.args[1].dtype()), " ", VarName(v),
                        " = ", arg(1), ";"));
    } else if (n == "cp_async") {
      const auto* l = c.args[2].As<ir::LoadNode>();
      std::string src = Addr(c.args[2]);
      if (ir::IsConstInt(c.args[3], 1)) {
        Line(absl::StrCat("tl::cp_async<", arg(0), ">(", arg(1), ", ", src,
                          ");"));
      } else {
        std::string pred = arg(3);
        Line(absl::StrCat("tl::cp_async<", arg(0), ">(", arg(1), ", ", pred,
                          " ? static_cast<const void*>(", src,
                          ") : static_cast<const void*>(",
                          BufName(l->buffer.get()), "), ", pred, ");"));
      }
    } else if (n == "cp_async_commit") {
      Line("tl::cp_async_commit();");
    } else if (n == "cp_async_wait") {
      Line(absl::StrCat("tl::cp_async_wait<", arg(0), ">();"));
    } else if (n == "ldmatrix") {
      Line(absl::StrCat("tl::ldmatrix_x", arg(0),
                        ir::IsConstInt(c.args[1], 1) ? "_trans" : "",
                        "(*reinterpret_cast<tl::u32(*)[", arg(0), "]>(", arg(2),
                        "), ", arg(3), ");"));
    } else if (n == "mma") {
      const std::string& kind = c.args[0].As<ir::CallNode>()->name;
      Line(absl::StrCat("tl::mma_m16n8k16_", kind, "(", arg(1), ", ", arg(2),
                        ", ", arg(3), ");"));
    } else if (n == "wgmma") {
      Wgmma(c);
    } else if (n == "fence_operand") {
      FenceOperand(c);
    } else if (n == "wgmma_fence") {
      Line("tl::wgmma_fence();");
    } else if (n == "wgmma_commit") {
      Line("tl::wgmma_commit();");
    } else if (n == "wgmma_wait") {
      Line(absl::StrCat("tl::wgmma_wait<", arg(0), ">();"));
    } else if (n == "fence_proxy_async") {
      Line("tl::fence_proxy_async();");
    } else if (n == "vec_copy") {
      const char* t = VecType(*ir::AsConstInt(c.args[0]));
      Line(absl::StrCat("*reinterpret_cast<", t, "*>(", Addr(c.args[1]),
                        ") = *reinterpret_cast<const ", t, "*>(",
                        Addr(c.args[2]), ");"));
    } else if (n == "vec_zero") {
      int64_t bytes = *ir::AsConstInt(c.args[0]);
      const char* t = VecType(bytes);
      std::string zero = bytes == 16  ? "make_uint4(0u, 0u, 0u, 0u)"
                         : bytes == 8 ? "make_uint2(0u, 0u)"
                                      : "0u";
      Line(absl::StrCat("*reinterpret_cast<", t, "*>(", Addr(c.args[1]),
                        ") = ", zero, ";"));
    } else if (n == "store_pair") {
      DataType t = c.args[0].dtype();
      std::string dst = Addr(c.args[0]);
      if (t == DataType::kF16 || t == DataType::kBF16) {
        Line(absl::StrCat("*reinterpret_cast<tl::u32*>(", dst, ") = tl::pack_",
                          t == DataType::kF16 ? "f16x2" : "bf16x2",
                          "(static_cast<float>(", arg(1),
                          "), static_cast<float>(", arg(2), "));"));
      } else if (t == DataType::kF32) {
        Line(absl::StrCat("*reinterpret_cast<float2*>(", dst,
                          ") = make_float2(", arg(1), ", ", arg(2), ");"));
      } else {
        Line(absl::StrCat("(", dst, ")[0] = ", arg(1), ";"));
        Line(absl::StrCat("(", dst, ")[1] = ", arg(2), ";"));
      }
    } else if (n == "atomic_add") {
      Line(
          absl::StrCat("tl::atomic_add(", Addr(c.args[0]), ", ", arg(1), ");"));
    } else if (n == "atomic_max" || n == "atomic_min") {
      DataType t = c.args[0].dtype();
      bool mx = n == "atomic_max";
      std::string f = t == DataType::kF32
                          ? (mx ? "tl::atomic_max" : "tessel_atomic_min")
                          : (mx ? "atomicMax" : "atomicMin");
      Line(absl::StrCat(f, "(", Addr(c.args[0]), ", ", arg(1), ");"));
    } else if (n == "atomic_add_vec") {
      int64_t v = *ir::AsConstInt(c.args[0]);
      DataType t = c.args[1].dtype();
      std::vector<std::string> vals;
      for (size_t i = 2; i < c.args.size(); ++i) vals.push_back(arg(i));
      std::string joined = absl::StrJoin(vals, ", ");
      if (t == DataType::kF32) {
        Line(absl::StrCat("tl::atomic_add_f32x", v, "(", Addr(c.args[1]),
                          ", make_float", v, "(", joined, "));"));
      } else if (t == DataType::kF16) {
        Line(absl::StrCat("tl::atomic_add_f16x2(", Addr(c.args[1]),
                          ", __halves2half2(", joined, "));"));
      } else {
        Line(absl::StrCat("tl::atomic_add_bf16x2(", Addr(c.args[1]),
                          ", __halves2bfloat162(", joined, "));"));
      }
    } else if (n == "mbarrier_init") {
      Line(absl::StrCat("tl::mbarrier_init(", Addr(c.args[0]), ", ", arg(1),
                        ");"));
    } else if (n == "fence_barrier_init") {
      Line("tl::fence_barrier_init();");
    } else if (n == "mbarrier_arrive") {
      Line(absl::StrCat("tl::mbarrier_arrive(", Addr(c.args[0]), ");"));
    } else if (n == "mbarrier_wait_parity") {
      Line(absl::StrCat("tl::mbarrier_wait_parity(", Addr(c.args[0]), ", ",
                        arg(1), ");"));
    } else if (n == "print") {
      std::string msg = c.args[0].As<ir::CallNode>()->name;
      msg = absl::StrReplaceAll(msg,
                                {{"\\", "\\\\"}, {"\"", "\\\""}, {"%", "%%"}});
      bool fl = IsFloat(c.args[1].dtype());
      Line(absl::StrCat("printf(\"", msg, fl ? " %f" : " %lld", "\\n\", ",
                        fl ? "static_cast<double>(" : "static_cast<long long>(",
                        arg(1), "));"));
    } else {
      error_ = absl::StrCat("codegen: unknown intrinsic ", n);
    }
  }

  void Kernel(const ir::KernelNode& k) {
    static const char* kIdx[] = {"x", "y", "z"};
    for (size_t d = 0; d < k.block_vars.size(); ++d) {
      Line(absl::StrCat("const int ", VarName(k.block_vars[d].get()),
                        " = static_cast<int>(blockIdx.", kIdx[d], ");"));
    }
    Stmt(k.body);
  }

  std::string Emit(std::string* entry) {
    const ir::Program& p = st_.program;
    *entry = Name(&st_, Sanitize(p.name.empty() ? "kernel" : p.name));
    // Written params are non-const.
    std::unordered_set<const ir::BufferNode*> written;
    ir::ForEachStmt(p.body, [&](const ir::Stmt& s) {
      if (const auto* st = s.As<ir::StoreNode>())
        written.insert(st->buffer.get());
      if (const auto* c = s.As<ir::EvaluateNode>()) {
        if (const auto* call = c->value.As<ir::CallNode>()) {
          for (const ir::Expr& a : call->args)
            if (const auto* l = a.As<ir::LoadNode>();
                l && call->name != "cp_async" &&
                a.same_as(call->args[call->name == "vec_copy" ||
                                             call->name == "vec_zero" ||
                                             call->name == "atomic_add_vec"
                                         ? 1
                                         : 0]))
              written.insert(l->buffer.get());
        }
      }
    });
    std::vector<std::string> params;
    for (const ir::Buffer& b : p.params) {
      params.push_back(absl::StrCat(written.count(b.get()) ? "" : "const ",
                                    CudaType(b->dtype), "* __restrict__ ",
                                    BufName(b.get())));
    }
    for (const ir::Var& d : p.dims) {
      params.push_back(absl::StrCat("const int ", VarName(d.get())));
    }
    // Body first (names settle), then the header around it.
    std::ostringstream body_text;
    std::swap(out_, body_text);
    indent_ = 1;
    // Shared buffers: typed pointers and 32-bit addresses at planned offsets.
    // Buffers in the order the body first names them, not in the offset
    // map's (pointer-hashed) order: buffers sharing an offset then get the
    // same names in every process, and so the same cache key.
    struct Uses : ir::IRVisitor {
      std::unordered_set<const ir::BufferNode*> seen;
      std::vector<const ir::BufferNode*> order;
      void VisitBuffer(const ir::Buffer& b) override {
        if (seen.insert(b.get()).second) order.push_back(b.get());
      }
    } uses;
    uses.VisitStmt(p.body);
    std::map<int64_t, std::vector<const ir::BufferNode*>> by_offset;
    for (const ir::BufferNode* b : uses.order) {
      auto it = st_.smem.offset.find(b);
      if (it != st_.smem.offset.end()) by_offset[it->second].push_back(b);
    }
    if (st_.smem.total_bytes > 0) {
      Line("extern __shared__ __align__(1024) tl::u8 smem[];");
      Line("const tl::u32 smem_base = tl::smem_addr(smem);");
      std::vector<std::pair<std::string, std::string>> decls;
      for (const auto& [off, bufs] : by_offset) {
        for (const ir::BufferNode* b : bufs) {
          const char* t =
              b->scope == ir::Scope::kBarrier ? "tl::u64" : CudaType(b->dtype);
          std::string name = BufName(b);
          Line(absl::StrCat(t, "* const ", name, " = reinterpret_cast<", t,
                            "*>(smem + ", off, ");"));
          Line(absl::StrCat("const tl::u32 ", name, "_addr = smem_base + ", off,
                            ";"));
          Line(absl::StrCat("(void)", name, "; (void)", name, "_addr;"));
        }
      }
    }
    Stmt(p.body);
    std::swap(out_, body_text);
    std::ostringstream src;
    src << "// Generated by tessel from program \"" << p.name << "\" for "
        << st_.target.arch() << ".\n";
    src << "// " << st_.threads << " threads per block, "
        << st_.smem.total_bytes << " bytes of dynamic shared memory.\n";
    src << "#include \"tessel_prelude.cuh\"\n\n" << kHelpers << "\n";
    src << "extern \"C\" __global__ void __launch_bounds__(" << st_.threads
        << ")\n"
        << *entry << "(" << absl::StrJoin(params, ", ") << ") {\n";
    src << body_text.str() << "}\n";
    return src.str();
  }

  std::string error_;

 private:
  const passes::LoweringState& st_;
  std::ostringstream out_;
  int indent_ = 0;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace

absl::StatusOr<GeneratedKernel> EmitCuda(const passes::LoweringState& state) {
  Printer p(state);
  // Params and dims claim their names first.
  for (const ir::Buffer& b : state.program.params) p.BufName(b.get());
  for (const ir::Var& d : state.program.dims) p.VarName(d.get());
  GeneratedKernel k;
  std::string entry;
  k.source.text = p.Emit(&entry);
  if (!p.error_.empty()) return absl::InternalError(p.error_);
  k.source.entry = entry;
  k.source.headers = PreludeHeaders();
  for (size_t i = 0; i < state.program.params.size(); ++i)
    k.signature.push_back(jit::ArgSpec::Pointer());
  for (size_t i = 0; i < state.program.dims.size(); ++i)
    k.signature.push_back(jit::ArgSpec::I32());
  k.threads = state.threads;
  k.dynamic_smem_bytes = state.smem.total_bytes;
  if (const char* dir = std::getenv("TESSEL_DUMP_SOURCE"); dir && *dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream(std::filesystem::path(dir) / (entry + ".cu"))
        << k.source.text;
  }
  return k;
}

}  // namespace tessel::codegen
