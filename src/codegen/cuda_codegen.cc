#include "src/codegen/cuda_codegen.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/cuda_printer.h"
#include "src/codegen/prelude.h"
#include "src/ir/substitute.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"
#include "src/passes/intrinsics.h"

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

// The intrinsic an Evaluate statement calls, if any.
std::optional<passes::Intrinsic> EvaluatedIntrinsic(const ir::Stmt& s) {
  const auto* e = s.As<ir::EvaluateNode>();
  const auto* c = e ? e->value.As<ir::CallNode>() : nullptr;
  if (c == nullptr) return std::nullopt;
  return passes::IntrinsicOf(*c);
}

// The mma.sync and ldmatrix fragments a statement runs, its unrolled
// loops of constant extent counted out; -1 where such a loop has another
// extent or a loop is not unrolled around one.
int64_t FragmentCount(const ir::Stmt& s) {
  if (!s.defined()) return 0;
  switch (s->kind) {
    case ir::StmtKind::kSeq: {
      int64_t n = 0;
      for (const ir::Stmt& c : s.As<ir::SeqNode>()->stmts) {
        int64_t m = FragmentCount(c);
        if (m < 0) return -1;
        n += m;
      }
      return n;
    }
    case ir::StmtKind::kFor: {
      const auto* f = s.As<ir::ForNode>();
      const int64_t body = FragmentCount(f->body);
      if (body <= 0) return body;
      std::optional<int64_t> extent = ir::AsConstInt(f->extent);
      if (f->for_kind != ir::ForKind::kUnrolled || !extent) return -1;
      return *extent * body;
    }
    case ir::StmtKind::kIfThenElse: {
      const auto* i = s.As<ir::IfThenElseNode>();
      const int64_t a = FragmentCount(i->then_case);
      const int64_t b = FragmentCount(i->else_case);
      return a < 0 || b < 0 ? -1 : a + b;
    }
    case ir::StmtKind::kAllocate:
      return FragmentCount(s.As<ir::AllocateNode>()->body);
    case ir::StmtKind::kEvaluate: {
      std::optional<passes::Intrinsic> id = EvaluatedIntrinsic(s);
      return id == passes::Intrinsic::kMma || id == passes::Intrinsic::kLdmatrix
                 ? 1
                 : 0;
    }
    default:
      return 0;
  }
}

// The fragment counts (FragmentCount) of the outermost unrolled loops
// around mma.sync / ldmatrix fragments in s.
void FragmentNests(const ir::Stmt& s, std::vector<int64_t>* nests) {
  if (!s.defined()) return;
  switch (s->kind) {
    case ir::StmtKind::kSeq:
      for (const ir::Stmt& c : s.As<ir::SeqNode>()->stmts) {
        FragmentNests(c, nests);
      }
      return;
    case ir::StmtKind::kFor: {
      const auto* f = s.As<ir::ForNode>();
      const int64_t n = FragmentCount(s);
      if (f->for_kind == ir::ForKind::kUnrolled && n != 0) {
        nests->push_back(ir::AsConstInt(f->min) ? n : -1);
      } else {
        FragmentNests(f->body, nests);
      }
      return;
    }
    case ir::StmtKind::kIfThenElse:
      FragmentNests(s.As<ir::IfThenElseNode>()->then_case, nests);
      FragmentNests(s.As<ir::IfThenElseNode>()->else_case, nests);
      return;
    case ir::StmtKind::kAllocate:
      FragmentNests(s.As<ir::AllocateNode>()->body, nests);
      return;
    case ir::StmtKind::kKernel:
      FragmentNests(s.As<ir::KernelNode>()->body, nests);
      return;
    default:
      return;
  }
}

// Whether the printer unrolls the kernel's loop nests around mma.sync /
// ldmatrix fragments itself: where there are at least 32 such nests and
// each is an unrolled one of at most 16 fragments. NVVM's time unrolling
// grows faster than the number of nests: a linear-attention backward has
// 204 (loops of 1-4 iterations) and NVVM spends more time unrolling them
// than on the code they make; printed out, their fragment arrays' indices
// are constants from the start (NVRTC CPU -10 to -33 % on the kernels with
// 40 nests or more; with fewer, no gain, and some kernels took longer). A
// kernel with a bigger nest (a gemm's 4 x 8 mma) keeps its loops.
// docs/benchmarks.md, "Compile latency".
bool UnrollsFragmentNests(const ir::Stmt& body) {
  std::vector<int64_t> nests;
  FragmentNests(body, &nests);
  if (nests.size() < 32) return false;
  for (int64_t n : nests) {
    if (n < 1 || n > 16) return false;
  }
  return true;
}

// The wgmma call of an Evaluate statement, or null.
const ir::CallNode* WgmmaCall(const ir::Stmt& s) {
  const auto* e = s.As<ir::EvaluateNode>();
  const auto* c = e ? e->value.As<ir::CallNode>() : nullptr;
  if (c == nullptr) return nullptr;
  std::optional<passes::Intrinsic> id = passes::IntrinsicOf(*c);
  return id == passes::Intrinsic::kWgmma ? c : nullptr;
}

// FNV-1a: a hash that is the same in every process and build.
uint64_t StableHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Names of any length are the user's to choose; identifiers stay short (a
// name of megabytes crashed NVRTC): a long one keeps its start and a hash of
// the whole, so two long names stay apart.
constexpr size_t kMaxIdentifier = 200;

}  // namespace

std::string SanitizedName(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  // Names the implementation reserves (__syncthreads, __half, _Bool, ...)
  // and the C / CUDA typedef style (uint32_t, size_t, cudaStream_t) would
  // clash with what the translation unit declares.
  if ((out.size() >= 2 && out[0] == '_' &&
       (out[1] == '_' || std::isupper(static_cast<unsigned char>(out[1])))) ||
      (out.size() >= 2 && out.compare(out.size() - 2, 2, "_t") == 0)) {
    out = "v" + out;
  }
  if (out.size() > kMaxIdentifier) {
    out = absl::StrCat(out.substr(0, kMaxIdentifier - 17), "_",
                       absl::Hex(StableHash(name), absl::kZeroPad16));
  }
  return out;
}

namespace {

// Names a kernel's identifiers never take: C++ and CUDA words, the
// prelude's, and the global functions of NVRTC's translation unit. Built
// once: every printer asks it.
const absl::flat_hash_set<std::string>& ReservedNames() {
  static const auto* const kNames = [] {
    auto* names_ptr = new absl::flat_hash_set<std::string>();
    absl::flat_hash_set<std::string>& names = *names_ptr;
    for (const char* reserved : {"smem",         "smem_base",
                                 "tl",           "int",
                                 "float",        "double",
                                 "bool",         "min",
                                 "max",          "threadIdx",
                                 "blockIdx",     "printf",
                                 "half",         "char",
                                 "short",        "long",
                                 "unsigned",     "signed",
                                 "const",        "auto",
                                 "for",          "if",
                                 "else",         "return",
                                 "void",         "new",
                                 "delete",       "this",
                                 "default",      "case",
                                 "do",           "while",
                                 "switch",       "break",
                                 "continue",     "goto",
                                 "static",       "extern",
                                 "volatile",     "inline",
                                 "struct",       "class",
                                 "union",        "enum",
                                 "typedef",      "sizeof",
                                 "namespace",    "template",
                                 "typename",     "operator",
                                 "public",       "private",
                                 "protected",    "virtual",
                                 "friend",       "register",
                                 "true",         "false",
                                 "nullptr",      "using",
                                 "try",          "catch",
                                 "throw",        "asm",
                                 "mutable",      "explicit",
                                 "export",       "float2",
                                 "float4",       "uint4",
                                 "uint2",        "dim3",
                                 "warpSize",     "blockDim",
                                 "gridDim",      "std",
                                 "tessel",       "main",
                                 "half2",        "nv_bfloat16",
                                 "nv_bfloat162", "CUtensorMap",
                                 "NULL",         "INFINITY",
                                 "NAN",          "alignas",
                                 "alignof",      "char8_t",
                                 "char16_t",     "char32_t",
                                 "co_await",     "co_return",
                                 "co_yield",     "concept",
                                 "consteval",    "constexpr",
                                 "constinit",    "const_cast",
                                 "decltype",     "dynamic_cast",
                                 "noexcept",     "reinterpret_cast",
                                 "requires",     "static_assert",
                                 "static_cast",  "thread_local",
                                 "typeid",       "wchar_t",
                                 "and",          "and_eq",
                                 "bitand",       "bitor",
                                 "compl",        "not",
                                 "not_eq",       "or",
                                 "or_eq",        "xor",
                                 "xor_eq",       "uint",
                                 "ushort",       "ulong",
                                 "uchar",        "longlong",
                                 "ulonglong"}) {
      names.insert(reserved);
    }
    // CUDA's vector types: int2, float4, ulonglong2, ...
    for (const char* base :
         {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
          "longlong", "ulonglong", "float", "double"}) {
      for (int n = 1; n <= 4; ++n) names.insert(absl::StrCat(base, n));
    }
    for (const char* reserved : {"dim3"}) {
      names.insert(reserved);
    }
    // Functions NVRTC's translation unit declares in the global namespace: a
    // kernel (extern "C") or a variable of one of these names would clash or
    // hide it (a program named "round" once failed to compile).
    for (const char* function :
         {"abs",    "acos",      "acosf",  "acosh",    "asin",      "asinf",
          "asinh",  "atan",      "atan2",  "atan2f",   "atanf",     "atanh",
          "cbrt",   "ceil",      "ceilf",  "copysign", "cos",       "cosf",
          "cosh",   "coshf",     "erf",    "erfc",     "erff",      "exp",
          "exp10",  "exp10f",    "exp2",   "exp2f",    "expf",      "expm1",
          "fabs",   "fabsf",     "fdim",   "floor",    "floorf",    "fma",
          "fmaf",   "fmax",      "fmaxf",  "fmin",     "fminf",     "fmod",
          "fmodf",  "frexp",     "hypot",  "isfinite", "isinf",     "isnan",
          "ldexp",  "lgamma",    "llrint", "llround",  "log",       "log10",
          "log10f", "log1p",     "log1pf", "log2",     "log2f",     "logf",
          "lrint",  "lround",    "modf",   "nan",      "nearbyint", "pow",
          "powf",   "remainder", "rint",   "round",    "roundf",    "rsqrt",
          "rsqrtf", "signbit",   "sin",    "sincos",   "sinf",      "sinh",
          "sinhf",  "sqrt",      "sqrtf",  "tan",      "tanf",      "tanh",
          "tanhf",  "tgamma",    "trunc",  "truncf",   "labs",      "llabs",
          "malloc", "free",      "memcpy", "memset",   "clock",     "clock64",
          "assert", "abort",     "exit",   "atomicAdd"}) {
      names.insert(function);
    }
    return names_ptr;
  }();
  return *kNames;
}

}  // namespace

Printer::Printer(const passes::LoweringState& st) : st_(st) {}

// (names_ is node-based: a returned name stays valid as others are added.)
const std::string& Printer::Name(const void* key, const std::string& want) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  std::string base = SanitizedName(want);
  std::string name = base;
  const absl::flat_hash_set<std::string>& reserved = ReservedNames();
  // Suffixes below next_suffix_[base] are all taken (names are never given
  // back): the search starts there, not at 1 for the hundredth "i".
  int& next = next_suffix_[base];
  for (int i = std::max(next, 1); used_.count(name) || reserved.contains(name);
       ++i) {
    name = absl::StrCat(base, "_", i);
    next = i + 1;
  }
  used_.insert(name);
  return names_[key] = std::move(name);
}

void Printer::Line(std::string_view s) {
  out_.append(2 * indent_, ' ');
  out_.append(s);
  out_.push_back('\n');
}

void Printer::Stmt(const ir::Stmt& s) {
  if (!s.defined()) return;
  switch (s->kind) {
    case ir::StmtKind::kSeq: {
      const std::vector<ir::Stmt>& stmts = s.As<ir::SeqNode>()->stmts;
      for (size_t i = 0; i < stmts.size();) {
        std::vector<const ir::CallNode*> wgmmas;
        while (i + wgmmas.size() < stmts.size()) {
          const ir::CallNode* c = WgmmaCall(stmts[i + wgmmas.size()]);
          if (c == nullptr) break;
          wgmmas.push_back(c);
        }
        if (wgmmas.empty()) {
          Stmt(stmts[i++]);
        } else {
          Wgmmas(wgmmas);
          i += wgmmas.size();
        }
      }
      return;
    }
    case ir::StmtKind::kKernel:
      Kernel(*s.As<ir::KernelNode>());
      return;
    case ir::StmtKind::kAllocate: {
      const auto* a = s.As<ir::AllocateNode>();
      const ir::BufferNode* b = a->buffer.get();
      if (b->scope == ir::Scope::kLocal) {
        std::string dims;
        if (std::optional<std::vector<int64_t>> e = FlatLocalExtents(*b)) {
          int64_t n = 1;
          for (int64_t d : *e) n *= d;
          dims = absl::StrCat("[", n, "]");
        } else {
          for (const ir::Expr& d : b->shape)
            absl::StrAppend(&dims, "[", Expr(d), "]");
        }
        Line(absl::StrCat(CudaType(b->dtype), " ", BufName(b), dims, ";"));
      } else if (ir::IsScalarVar(b->scope)) {
        Line(absl::StrCat(CudaType(b->dtype), " ", BufName(b), ";"));
      }
      Stmt(a->body);
      return;
    }
    case ir::StmtKind::kFor: {
      const auto* f = s.As<ir::ForNode>();
      if (!in_unrolled_nest_ && f->for_kind == ir::ForKind::kUnrolled) {
        const size_t outer = rebases_.size();
        DeclareRebases(*f);
        in_unrolled_nest_ = true;
        Stmt(s);
        in_unrolled_nest_ = false;
        rebases_.resize(outer);
        return;
      }
      std::string v = VarName(f->var.get());
      if (unroll_fragment_nests_ && FragmentCount(s) > 0 &&
          ir::AsConstInt(f->min)) {
        const int64_t min = *ir::AsConstInt(f->min);
        const int64_t end = min + *ir::AsConstInt(f->extent);
        for (int64_t k = min; k < end; ++k) {
          Line(absl::StrCat("{  // ", v, " = ", k));
          Block(ir::Substitute(
              f->body, {{f->var.get(), ir::IntImm(f->var.dtype(), k)}}));
          Line("}");
        }
        return;
      }
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
      Line(absl::StrCat(Access(st->buffer, st->indices), " = ", Expr(st->value),
                        ";"));
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

void Printer::Block(const ir::Stmt& s) {
  ++indent_;
  Stmt(s);
  --indent_;
}

void Printer::Kernel(const ir::KernelNode& k) {
  static const char* kIdx[] = {"x", "y", "z"};
  for (size_t d = 0; d < k.block_vars.size(); ++d) {
    Line(absl::StrCat("const int ", VarName(k.block_vars[d].get()),
                      " = static_cast<int>(blockIdx.", kIdx[d], ");"));
  }
  Stmt(k.body);
}

std::string Printer::Emit(std::string* entry) {
  const ir::Program& p = st_.program;
  *entry = Name(&st_, SanitizedName(p.name.empty() ? "kernel" : p.name));
  unroll_fragment_nests_ = UnrollsFragmentNests(p.body);
  // Written params are non-const.
  std::unordered_set<const ir::BufferNode*> written;
  ir::ForEachStmt(p.body, [&](const ir::Stmt& s) {
    if (const auto* st = s.As<ir::StoreNode>())
      written.insert(st->buffer.get());
    if (const auto* c = s.As<ir::EvaluateNode>()) {
      const auto* call = c->value.As<ir::CallNode>();
      std::optional<passes::Intrinsic> id =
          call ? passes::IntrinsicOf(*call) : std::nullopt;
      for (int i : id ? passes::InfoOf(*id).written : std::vector<int>{}) {
        if (const auto* l = call->args[i].As<ir::LoadNode>())
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
  for (const passes::TensorMapParam& m : st_.tensor_maps) {
    params.push_back(absl::StrCat("const __grid_constant__ tl::TmaDescriptor ",
                                  Name(&m, m.name)));
  }
  // Body first (names settle), then the header around it.
  std::string body_text;
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
  // The name may hold any bytes (a newline would end the comment).
  const std::string shown = p.name.size() > kMaxIdentifier
                                ? p.name.substr(0, kMaxIdentifier) + "..."
                                : p.name;
  src << "// Generated by tessel from program \"" << absl::CEscape(shown)
      << "\" for " << st_.target.arch() << ".\n";
  const int threads = st_.threads * st_.consumer_groups + st_.producer_threads;
  src << "// " << threads << " threads per block";
  if (st_.producer_threads > 0)
    src << " (" << st_.producer_threads << " of them TMA producers)";
  src << ", " << st_.smem.total_bytes << " bytes of dynamic shared memory.\n";
  src << "#include \"tessel_prelude.cuh\"\n\n";
  // A warp-specialized block runs one per SM: its register budget assumes it.
  src << "extern \"C\" __global__ void __launch_bounds__(" << threads
      << (st_.producer_threads > 0 ? ", 1" : "") << ")\n"
      << *entry << "(" << absl::StrJoin(params, ", ") << ") {\n";
  src << body_text << "}\n";
  return src.str();
}

void SetLaunchShape(const passes::LoweringState& state, GeneratedKernel* k) {
  for (size_t i = 0; i < state.program.params.size(); ++i)
    k->signature.push_back(jit::ArgSpec::Pointer());
  for (size_t i = 0; i < state.program.dims.size(); ++i)
    k->signature.push_back(jit::ArgSpec::I32());
  for (size_t i = 0; i < state.tensor_maps.size(); ++i)
    k->signature.push_back(jit::ArgSpec::Bytes(128));  // a CUtensorMap
  k->threads = state.threads * state.consumer_groups + state.producer_threads;
  k->dynamic_smem_bytes = state.smem.total_bytes;
}

absl::StatusOr<GeneratedKernel> EmitCuda(const passes::LoweringState& state) {
  Printer p(state);
  // Params and dims claim their names first.
  for (const ir::Buffer& b : state.program.params) p.BufName(b.get());
  for (const ir::Var& d : state.program.dims) p.VarName(d.get());
  for (const passes::TensorMapParam& m : state.tensor_maps) p.Name(&m, m.name);
  GeneratedKernel k;
  std::string entry;
  k.source.text = p.Emit(&entry);
  if (!p.error_.empty()) return absl::InternalError(p.error_);
  k.source.entry = entry;
  k.source.headers = PreludeHeaders();
  SetLaunchShape(state, &k);
  if (const char* dir = std::getenv("TESSEL_DUMP_SOURCE"); dir && *dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream(std::filesystem::path(dir) / (entry + ".cu"))
        << k.source.text;
  }
  return k;
}

}  // namespace tessel::codegen
