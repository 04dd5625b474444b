// The PTX module around a kernel: its entry and params, the registers it
// declares, and the statements (loops, branches, stores, allocations).
#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/cuda_printer.h"
#include "src/codegen/ptx/ptx_codegen.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/ir/walk.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {
namespace {

// The register name prefix of a dtype: one PTX register class each.
const char* Prefix(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "%p";
    case DataType::kF16:
    case DataType::kBF16:
    case DataType::kI16:
      return "%h";
    case DataType::kF32:
      return "%f";
    case DataType::kI64:
      return "%rd";
    case DataType::kF64:
      return "%fd";
    default:
      return "%r";
  }
}

const char* PrefixType(const std::string& prefix) {
  if (prefix == "%p") return ".pred";
  if (prefix == "%h") return ".b16";
  if (prefix == "%f") return ".f32";
  if (prefix == "%rd") return ".b64";
  if (prefix == "%fd") return ".f64";
  return ".b32";
}

}  // namespace

const char* Emitter::RegType(DataType t) { return PrefixType(Prefix(t)); }

const char* Emitter::ValueType(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "pred";
    case DataType::kI16:
      return "s16";
    case DataType::kI32:
      return "s32";
    case DataType::kU32:
      return "u32";
    case DataType::kI64:
      return "s64";
    case DataType::kF16:
      return "f16";
    case DataType::kBF16:
      return "bf16";
    case DataType::kF32:
      return "f32";
    case DataType::kF64:
      return "f64";
    default:
      return "b32";
  }
}

std::string Emitter::NewReg(DataType t) {
  const std::string prefix = Prefix(t);
  return absl::StrCat(prefix, reg_count_[prefix]++);
}

std::string Emitter::NewLabel() { return absl::StrCat("$L", labels_++); }

void Emitter::Line(const std::string& s) {
  absl::StrAppend(&segments_.back(), s.back() == ':' ? "" : "\t", s, "\n");
}

void Emitter::Fail(const std::string& what) {
  if (error_.ok())
    error_ = absl::UnimplementedError(absl::StrCat("ptx: ", what));
}

void Emitter::PushScope(bool barrier) {
  scopes_.push_back(Scope{.barrier = barrier});
}
void Emitter::PopScope() {
  scopes_.pop_back();
  // Code after the construct: values hoisted above the construct would stay
  // live across it.
  if (!scopes_.empty()) scopes_.back().hoist = -1;
}

void Emitter::MarkHoist() {
  scopes_.back().hoist = static_cast<int>(segments_.size());
  segments_.emplace_back();  // the slot
  segments_.emplace_back();  // what follows
}

std::string Emitter::Lookup(const std::string& key) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->cse.find(key);
    if (found != it->cse.end()) return found->second;
  }
  return "";
}

void Emitter::Remember(const std::string& key, const std::string& reg) {
  scopes_.back().cse[key] = reg;
  depth_[reg] = static_cast<int>(scopes_.size()) - 1;
}

int Emitter::Depth(const Value& v) {
  if (v.is_const()) return 0;
  auto it = depth_.find(v.key);
  return it != depth_.end() ? it->second : static_cast<int>(scopes_.size()) - 1;
}

std::string Emitter::Reassigned(const std::string& reg) {
  assigned_.push_back(reg);
  std::string key = absl::StrCat(reg, "@", ++versions_[reg]);
  depth_[key] = static_cast<int>(scopes_.size()) - 1;
  return key;
}

void Emitter::Stmt(const ir::Stmt& s) {
  if (!s.defined() || failed()) return;
  switch (s->kind) {
    case ir::StmtKind::kSeq:
      for (const ir::Stmt& c : s.As<ir::SeqNode>()->stmts) Stmt(c);
      return;
    case ir::StmtKind::kKernel: {
      const auto* k = s.As<ir::KernelNode>();
      static const char* kIdx[] = {"x", "y", "z"};
      for (size_t d = 0; d < k->block_vars.size(); ++d) {
        const std::string r = NewReg(DataType::kI32);
        Line(absl::StrCat("mov.u32 ", r, ", %ctaid.", kIdx[d], ";"));
        vars_[k->block_vars[d].get()] =
            Value{.dtype = DataType::kI32, .reg = r, .key = r};
        depth_[r] = 0;
      }
      Stmt(k->body);
      return;
    }
    case ir::StmtKind::kAllocate:
      Allocate(*s.As<ir::AllocateNode>());
      return;
    case ir::StmtKind::kFor:
      For(*s.As<ir::ForNode>());
      return;
    case ir::StmtKind::kIfThenElse:
      If(*s.As<ir::IfThenElseNode>());
      return;
    case ir::StmtKind::kStore:
      Store(*s.As<ir::StoreNode>());
      return;
    case ir::StmtKind::kSyncThreads:
      Line("bar.sync 0;");
      return;
    case ir::StmtKind::kEvaluate:
      Intrinsic(*s.As<ir::EvaluateNode>()->value.As<ir::CallNode>());
      return;
    default:
      Fail(absl::StrCat("statement ", ir::StmtKindName(s->kind)));
      return;
  }
}

void Emitter::Allocate(const ir::AllocateNode& a) {
  const ir::BufferNode* b = a.buffer.get();
  if (b->scope == ir::Scope::kLocal || ir::IsScalarVar(b->scope)) {
    if (!Spelled(b->dtype)) return Fail("a local of an 8-bit or f64 dtype");
    std::vector<int64_t> extents;
    int64_t n = 1;
    for (const ir::Expr& d : b->shape) {
      std::optional<int64_t> e = ir::AsConstInt(d);
      if (!e) return Fail("a local array of symbolic shape");
      extents.push_back(*e);
      n *= *e;
    }
    if (n > 4096) return Fail("a local array of over 4096 elements");
    std::vector<std::string> regs;
    for (int64_t i = 0; i < n; ++i) regs.push_back(NewReg(b->dtype));
    local_[b] = std::move(regs);
    extents_[b] = std::move(extents);
  } else if (b->scope == ir::Scope::kFragment) {
    return Fail("a fragment after lowering");
  }
  Stmt(a.body);
}

void Emitter::For(const ir::ForNode& f) {
  const ir::VarNode* var = f.var.get();
  if (f.for_kind == ir::ForKind::kUnrolled) {
    std::optional<int64_t> min = ir::AsConstInt(f.min);
    std::optional<int64_t> extent = ir::AsConstInt(f.extent);
    if (min && extent) {
      for (int64_t k = *min; k < *min + *extent && !failed(); ++k) {
        vars_[var] = Const(var->dtype, k);
        Stmt(f.body);
      }
      vars_.erase(var);
      return;
    }
  }
  // One iteration (a tile loop over a single tile): straight-line code, as
  // NVVM would make it.
  if (ir::IsConstInt(f.extent, 1)) {
    vars_[var] = Expr(f.min);
    Stmt(f.body);
    vars_.erase(var);
    return;
  }
  if (ir::IsConstInt(f.extent, 0)) return;
  if (var->dtype != DataType::kI32) return Fail("a loop counter not i32");
  // What the body computes from values outside the loop goes before it (and
  // before the first test, so that code after the loop may use it too).
  const bool hoisting = options_.hoist_out_of_loops;
  if (hoisting) MarkHoist();
  const int hoist = scopes_.back().hoist;
  const Value min = Expr(f.min);
  const std::string r = NewReg(DataType::kI32);
  Line(absl::StrCat("mov.b32 ", r, ", ", Operand(min), ";"));
  const std::string head = NewLabel(), end = NewLabel();
  // The bound as C's for loop reads it: before every iteration.
  auto exit_unless_below = [&](const std::string& key) {
    vars_[var] = Value{.dtype = DataType::kI32, .reg = r, .key = key};
    PushScope(/*barrier=*/true);
    const Value bound = Expr(f.min + f.extent);
    const std::string p = NewReg(DataType::kBool);
    Line(absl::StrCat("setp.ge.s32 ", p, ", ", r, ", ", Operand(bound), ";"));
    Line(absl::StrCat("@", p, " bra ", end, ";"));
    PopScope();
  };
  exit_unless_below(Reassigned(r));
  if (hoisting) scopes_.back().hoist = hoist;  // the test's scope reset it
  const size_t assigned_before = assigned_.size();
  Line(head + ":");
  // A register the body assigns holds another value in the next iteration.
  for (auto& [reg, version] : versions_) ++version;
  PushScope(/*barrier=*/!hoisting);
  vars_[var] = Value{.dtype = DataType::kI32, .reg = r, .key = Reassigned(r)};
  Stmt(f.body);
  PopScope();
  Line(absl::StrCat("add.s32 ", r, ", ", r, ", 1;"));
  vars_[var] = Value{.dtype = DataType::kI32, .reg = r, .key = Reassigned(r)};
  PushScope(/*barrier=*/true);
  const Value bound = Expr(f.min + f.extent);
  const std::string p = NewReg(DataType::kBool);
  Line(absl::StrCat("setp.lt.s32 ", p, ", ", r, ", ", Operand(bound), ";"));
  Line(absl::StrCat("@", p, " bra ", head, ";"));
  PopScope();
  Line(end + ":");
  vars_.erase(var);
  ForgetAssignedSince(assigned_before);
}

void Emitter::If(const ir::IfThenElseNode& i) {
  const Value cond = Expr(i.cond);
  const size_t assigned_before = assigned_.size();
  MarkHoist();
  if (cond.int_const) {
    PushScope();
    Stmt(*cond.int_const ? i.then_case : i.else_case);
    PopScope();
    return;
  }
  const std::string other = NewLabel(), end = NewLabel();
  Line(absl::StrCat("@!", cond.reg, " bra ", other, ";"));
  PushScope();
  Stmt(i.then_case);
  PopScope();
  if (i.else_case.defined()) Line(absl::StrCat("bra.uni ", end, ";"));
  Line(other + ":");
  if (i.else_case.defined()) {
    PushScope();
    Stmt(i.else_case);
    PopScope();
    Line(end + ":");
  }
  ForgetAssignedSince(assigned_before);
}

// After a branch or loop, a register it assigned may hold either value: a
// new version, so nothing computed from the old or the branch's one is
// taken for it.
void Emitter::ForgetAssignedSince(size_t mark) {
  std::vector<std::string> regs(assigned_.begin() + mark, assigned_.end());
  for (const std::string& r : regs) Reassigned(r);
  assigned_.resize(mark);
  assigned_.insert(assigned_.end(), regs.begin(), regs.end());
}

// An odd element of an f16 / bf16 array just rounded from f32, its even
// neighbour too: both again as one cvt.rn.f16x2.f32, the pair's halves in
// the elements, so that a later pack of the two into a word (wgmma's A
// fragment) costs nothing, as NVVM makes it. The first cvt is left dead.
void Emitter::PackedPair(const ir::BufferNode* b, const std::string& hi) {
  const std::vector<std::string>& regs = local_.at(b);
  const auto at = std::find(regs.begin(), regs.end(), hi);
  if (at == regs.end() || (at - regs.begin()) % 2 == 0) return;
  const std::string& lo = *(at - 1);
  auto lo_src = rounded_from_.find(absl::StrCat(lo, "@", versions_[lo]));
  auto hi_src = rounded_from_.find(absl::StrCat(hi, "@", versions_[hi]));
  if (lo_src == rounded_from_.end() || !Current(lo_src->second) ||
      !Current(hi_src->second)) {
    return;
  }
  const std::string pair = NewReg(DataType::kU32);
  PreludeLines(PackFunction(b->dtype),
               {pair, InReg(hi_src->second), InReg(lo_src->second)});
  Line(absl::StrCat("mov.b32 {", lo, ", ", hi, "}, ", pair, ";"));
  const Value lo_from = lo_src->second, hi_from = hi_src->second;
  rounded_from_[Reassigned(lo)] = lo_from;
  rounded_from_[Reassigned(hi)] = hi_from;
}

void Emitter::Store(const ir::StoreNode& s) {
  const ir::BufferNode* b = s.buffer.get();
  const Value v = Expr(s.value);
  if (failed()) return;
  if (b->scope == ir::Scope::kLocal || ir::IsScalarVar(b->scope)) {
    std::vector<int64_t> idx;
    for (const ir::Expr& i : s.indices) {
      const Value c = Expr(i);
      if (!c.int_const) return Fail("a local array indexed by a variable");
      idx.push_back(*c.int_const);
    }
    if (ir::IsScalarVar(b->scope)) idx.assign(1, 0);
    const std::string r = LocalElement(b, idx);
    if (failed()) return;
    if (v.reg == r) return;
    Line(absl::StrCat("mov", RegType(b->dtype), " ", r, ", ", InReg(v), ";"));
    const std::string key = Reassigned(r);
    auto it = rounded_from_.find(v.key);
    if (it == rounded_from_.end()) return;
    rounded_from_[key] = it->second;
    PackedPair(b, r);
    return;
  }
  if (!Spelled(b->dtype) || b->dtype == DataType::kBool) {
    return Fail("a store of an 8-bit, bool or f64 element");
  }
  const std::string value = InReg(v);
  int64_t offset = 0;
  bool shared = false;
  const std::string addr =
      ElementAddress(ir::Load(s.buffer, s.indices), &offset, &shared);
  if (failed()) return;
  const bool b16 = dtype_bytes(b->dtype) == 2;
  Line(absl::StrCat("st.", shared ? "shared" : "global", ".",
                    b16 ? "b16" : ValueType(b->dtype), " [", addr,
                    offset ? absl::StrCat("+", offset) : "", "], ", value,
                    ";"));
}

absl::StatusOr<std::string> Emitter::Module(std::string* entry) {
  const ir::Program& p = st_.program;
  if (st_.cluster_size > 1) return absl::UnimplementedError("ptx: clusters");
  *entry = SanitizedName(p.name.empty() ? "kernel" : p.name);
  std::unordered_set<const ir::BufferNode*> written;
  ir::ForEachStmt(p.body, [&](const ir::Stmt& s) {
    if (const auto* st = s.As<ir::StoreNode>())
      written.insert(st->buffer.get());
    if (const ir::CallNode* c = passes::AsIntrin(s)) {
      std::optional<passes::Intrinsic> id = passes::IntrinsicOf(*c);
      for (int i : id ? passes::InfoOf(*id).written : std::vector<int>{}) {
        if (const auto* l = c->args[i].As<ir::LoadNode>())
          written.insert(l->buffer.get());
      }
    }
  });
  std::vector<std::string> params;
  PushScope();
  int index = 0;
  for (const ir::Buffer& b : p.params) {
    const std::string name = absl::StrCat(*entry, "_param_", index++);
    params.push_back(absl::StrCat(".param .u64 ", name));
    const std::string raw = NewReg(DataType::kI64);
    const std::string r = NewReg(DataType::kI64);
    Line(absl::StrCat("ld.param.u64 ", raw, ", [", name, "];"));
    Line(absl::StrCat("cvta.to.global.u64 ", r, ", ", raw, ";"));
    global_base_[b.get()] = r;
    if (!written.count(b.get())) read_only_.insert(b.get());
  }
  for (const ir::Var& d : p.dims) {
    const std::string name = absl::StrCat(*entry, "_param_", index++);
    params.push_back(absl::StrCat(".param .u32 ", name));
    const std::string r = NewReg(DataType::kI32);
    Line(absl::StrCat("ld.param.u32 ", r, ", [", name, "];"));
    vars_[d.get()] = Value{.dtype = DataType::kI32, .reg = r, .key = r};
  }
  for (size_t m = 0; m < st_.tensor_maps.size(); ++m) {
    const std::string name = absl::StrCat(*entry, "_param_", index++);
    params.push_back(absl::StrCat(".param .align 64 .b8 ", name, "[128]"));
    const std::string raw = NewReg(DataType::kI64);
    const std::string r = NewReg(DataType::kI64);
    Line(absl::StrCat("mov.b64 ", raw, ", ", name, ";"));
    Line(absl::StrCat("cvta.param.u64 ", r, ", ", raw, ";"));
    tensor_map_params_.push_back(r);
  }
  if (st_.smem.total_bytes > 0) {
    smem_base_ = NewReg(DataType::kU32);
    Line(absl::StrCat("mov.u32 ", smem_base_, ", smem;"));
  }
  tid_ = NewReg(DataType::kI32);
  Line(absl::StrCat("mov.u32 ", tid_, ", %tid.x;"));
  for (const std::string& r : {tid_, smem_base_}) depth_[r] = 0;
  for (const auto& [b, r] : global_base_) depth_[r] = 0;
  for (const std::string& r : tensor_map_params_) depth_[r] = 0;
  for (const auto& [v, value] : vars_) depth_[value.key] = 0;
  Stmt(p.body);
  PopScope();
  if (failed()) return error_;

  std::ostringstream m;
  const std::string& arch = st_.target.arch();
  const int isa = std::max(st_.target.sm() >= 90 ? 80 : 78, ptx_isa_needed_);
  m << "// Generated by tessel (PTX backend) for " << arch << ".\n"
    << ".version " << isa / 10 << "." << isa % 10 << "\n"
    << ".target " << arch << "\n.address_size 64\n\n";
  if (st_.smem.total_bytes > 0)
    m << ".extern .shared .align 1024 .b8 smem[];\n\n";
  const int threads = st_.threads * st_.consumer_groups + st_.producer_threads;
  m << ".visible .entry " << *entry << "(\n\t" << absl::StrJoin(params, ",\n\t")
    << "\n)\n.maxntid " << threads << ", 1, 1\n";
  if (st_.producer_threads > 0) m << ".minnctapersm 1\n";
  m << "{\n";
  for (const auto& [prefix, n] : reg_count_)
    m << "\t.reg " << PrefixType(prefix) << " " << prefix << "<" << n << ">;\n";
  for (const std::string& segment : segments_) m << segment;
  m << "\tret;\n}\n";
  return m.str();
}

}  // namespace tessel::codegen::ptx

namespace tessel::codegen {

absl::StatusOr<GeneratedKernel> EmitPtx(const passes::LoweringState& state,
                                        PtxEmitOptions options) {
  return EmitPtx(state, options, PreludeAsm::Embedded(state.target.sm()));
}

absl::StatusOr<GeneratedKernel> EmitPtx(const passes::LoweringState& state,
                                        PtxEmitOptions options,
                                        const PreludeAsm& prelude) {
  ptx::Emitter emitter(state, options, prelude);
  GeneratedKernel k;
  std::string entry;
  absl::StatusOr<std::string> text = emitter.Module(&entry);
  if (!text.ok()) return text.status();
  k.source.text = *std::move(text);
  k.source.entry = entry;
  k.source.language = jit::SourceLanguage::kPtx;
  SetLaunchShape(state, &k);
  return k;
}

}  // namespace tessel::codegen
