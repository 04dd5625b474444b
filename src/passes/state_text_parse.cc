// ParseStateDump (state_text.h): the program first (with the buffers the
// state section declares), then each "#   key ..." line of "# state".
#include <charconv>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/ir/parser.h"
#include "src/ir/walk.h"
#include "src/passes/state_text.h"
#include "src/passes/state_text_names.h"
#include "tessel/status_macros.h"

namespace tessel::passes {
namespace {

// The words of one state line, read left to right.
class Words {
 public:
  Words(int line, std::string_view text) : line_(line) {
    for (absl::string_view w :
         absl::StrSplit(absl::string_view(text.data(), text.size()), ' ',
                        absl::SkipEmpty()))
      words_.emplace_back(w.data(), w.size());
  }
  bool done() const { return at_ >= words_.size(); }
  std::string Peek() const { return done() ? "" : words_[at_]; }
  absl::StatusOr<std::string> Word() {
    if (done()) return Error("a word is missing");
    return words_[at_++];
  }
  absl::StatusOr<int64_t> Int() {
    TESSEL_ASSIGN_OR_RETURN(std::string w, Word());
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      return Error(absl::StrCat("'", w, "' is not an integer"));
    return v;
  }
  absl::Status Key(const std::string& key) {
    TESSEL_ASSIGN_OR_RETURN(std::string w, Word());
    if (w != key) return Error(absl::StrCat("expected '", key, "'"));
    return absl::OkStatus();
  }
  // The rest of the line, words joined by one space.
  std::string Rest() {
    std::string out;
    for (; at_ < words_.size(); ++at_)
      absl::StrAppend(&out, out.empty() ? "" : " ", words_[at_]);
    return out;
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(line_, ": state: ", what));
  }

 private:
  int line_;
  std::vector<std::string> words_;
  size_t at_ = 0;
};

struct StateLine {
  int number;
  std::string text;  // after "#   "
};

// The names a state line may use: the program's buffers and variables.
struct Names {
  std::map<std::string, ir::Buffer> buffers;
  std::map<std::string, ir::Var> vars;
  std::vector<ir::Stmt> stmts;

  explicit Names(const ir::Program& p, const std::vector<ir::Buffer>& extra) {
    for (const ir::Buffer& b : p.params) buffers[b->name] = b;
    for (const ir::Buffer& b : extra) buffers[b->name] = b;
    for (const ir::Var& v : p.dims) vars[v.name()] = v;
    ir::ForEachStmt(p.body, [&](const ir::Stmt& s) {
      if (!s.As<ir::SeqNode>()) stmts.push_back(s);
      if (const auto* a = s.As<ir::AllocateNode>())
        buffers[a->buffer->name] = a->buffer;
      if (const auto* k = s.As<ir::KernelNode>())
        for (const ir::Var& v : k->block_vars) vars[v.name()] = v;
      if (const auto* f = s.As<ir::ForNode>()) vars[f->var.name()] = f->var;
      if (const auto* w = s.As<ir::WarpSpecializeNode>();
          w && w->group.defined())
        vars[w->group.name()] = w->group;
      if (const auto* e = s.As<ir::EvaluateNode>()) {
        const auto* c = e->value.As<ir::CallNode>();
        if (c && c->name == "let" && !c->args.empty())
          if (const auto* v = c->args[0].As<ir::VarNode>())
            vars[v->name] = ir::Var(
                std::static_pointer_cast<const ir::VarNode>(c->args[0].node()));
      }
    });
  }
};

absl::StatusOr<ir::Buffer> BufferOf(const Names& n, Words& w) {
  TESSEL_ASSIGN_OR_RETURN(std::string name, w.Word());
  auto it = n.buffers.find(name);
  if (it == n.buffers.end())
    return w.Error(absl::StrCat("unknown buffer '", name, "'"));
  return it->second;
}
absl::StatusOr<ir::Var> VarOf(const Names& n, Words& w) {
  TESSEL_ASSIGN_OR_RETURN(std::string name, w.Word());
  auto it = n.vars.find(name);
  if (it == n.vars.end())
    return w.Error(absl::StrCat("unknown variable '", name, "'"));
  return it->second;
}
// "-": a statement a pass has replaced since (the lowering replaces tile
// ops); a stand-in that is not in the program reads back as "-" again.
absl::StatusOr<ir::Stmt> StmtOf(const Names& n, Words& w) {
  if (w.Peek() == "-") {
    TESSEL_RETURN_IF_ERROR(w.Key("-"));
    return ir::MakeStmt<ir::EvaluateNode>(ir::Expr(0), ir::SourceLoc());
  }
  TESSEL_ASSIGN_OR_RETURN(int64_t i, w.Int());
  if (i < 0 || i >= static_cast<int64_t>(n.stmts.size()))
    return w.Error(absl::StrCat("no statement ", i));
  return n.stmts[i];
}

absl::StatusOr<FragmentLayout> ParseLayout(Words& w) {
  FragmentLayout::Fields f;
  TESSEL_ASSIGN_OR_RETURN(std::string kind, w.Word());
  if (!Named(kLayoutKinds, kind, &f.kind))
    return w.Error(absl::StrCat("unknown layout '", kind, "'"));
  while (true) {
    TESSEL_ASSIGN_OR_RETURN(std::string d, w.Word());
    if (d == "threads") break;
    int64_t v = 0;
    std::from_chars(d.data(), d.data() + d.size(), v);
    f.shape.push_back(v);
  }
  auto int_field = [&](int* out) -> absl::Status {
    TESSEL_ASSIGN_OR_RETURN(int64_t v, w.Int());
    *out = static_cast<int>(v);
    return absl::OkStatus();
  };
  int rows = 0;
  TESSEL_RETURN_IF_ERROR(int_field(&f.threads));
  TESSEL_RETURN_IF_ERROR(w.Key("warps"));
  TESSEL_RETURN_IF_ERROR(int_field(&f.warps_m));
  TESSEL_RETURN_IF_ERROR(int_field(&f.warps_n));
  TESSEL_RETURN_IF_ERROR(w.Key("tiles"));
  TESSEL_RETURN_IF_ERROR(int_field(&f.mi));
  TESSEL_RETURN_IF_ERROR(int_field(&f.ni));
  TESSEL_RETURN_IF_ERROR(w.Key("vec"));
  TESSEL_RETURN_IF_ERROR(int_field(&f.vec));
  TESSEL_RETURN_IF_ERROR(w.Key("group"));
  TESSEL_RETURN_IF_ERROR(int_field(&f.group));
  TESSEL_RETURN_IF_ERROR(w.Key("warpgroup_rows"));
  TESSEL_RETURN_IF_ERROR(int_field(&rows));
  f.warpgroup_rows = rows != 0;
  if (w.Peek() == "padded_rows") {
    TESSEL_RETURN_IF_ERROR(w.Key("padded_rows"));
    TESSEL_ASSIGN_OR_RETURN(f.padded_rows, w.Int());
  }
  if (w.Peek() == "warpgroup_cols") {
    int cols = 0;
    TESSEL_RETURN_IF_ERROR(w.Key("warpgroup_cols"));
    TESSEL_RETURN_IF_ERROR(int_field(&cols));
    f.warpgroup_cols = cols != 0;
  }
  return FragmentLayout::FromFields(f);
}

absl::StatusOr<GemmOperandPlan> ParseOperand(Words& w) {
  GemmOperandPlan o;
  TESSEL_ASSIGN_OR_RETURN(std::string path, w.Word());
  if (!Named(kOperandPaths, path, &o.path))
    return w.Error(absl::StrCat("unknown operand path '", path, "'"));
  TESSEL_ASSIGN_OR_RETURN(int64_t k_major, w.Int());
  TESSEL_ASSIGN_OR_RETURN(int64_t atom, w.Int());
  o.k_major = k_major != 0;
  o.atom_bytes = static_cast<int>(atom);
  return o;
}

absl::StatusOr<GemmPlan> ParseGemmPlan(Words& w) {
  GemmPlan p;
  TESSEL_ASSIGN_OR_RETURN(std::string instr, w.Word());
  if (!Named(kInstructions, instr, &p.instruction))
    return w.Error(absl::StrCat("unknown instruction '", instr, "'"));
  std::vector<int64_t> v;
  for (const char* key : {"warps", "", "warp_tile", "", "tiles", "",
                          "warpgroup_rows", "k_steps", "k_step", "wgmma_n"}) {
    if (*key) TESSEL_RETURN_IF_ERROR(w.Key(key));
    TESSEL_ASSIGN_OR_RETURN(int64_t x, w.Int());
    v.push_back(x);
  }
  p.warps_m = static_cast<int>(v[0]);
  p.warps_n = static_cast<int>(v[1]);
  p.warp_m = v[2];
  p.warp_n = v[3];
  p.m_tiles = static_cast<int>(v[4]);
  p.n_tiles = static_cast<int>(v[5]);
  p.warpgroup_rows = v[6] != 0;
  p.k_steps = static_cast<int>(v[7]);
  p.k_step = static_cast<int>(v[8]);
  p.wgmma_n = static_cast<int>(v[9]);
  TESSEL_RETURN_IF_ERROR(w.Key("a"));
  TESSEL_ASSIGN_OR_RETURN(p.a, ParseOperand(w));
  TESSEL_RETURN_IF_ERROR(w.Key("b"));
  TESSEL_ASSIGN_OR_RETURN(p.b, ParseOperand(w));
  if (w.Peek() == "small_m") {
    TESSEL_RETURN_IF_ERROR(w.Key("small_m"));
    TESSEL_ASSIGN_OR_RETURN(p.small_m, w.Int());
  }
  if (!w.done()) {
    TESSEL_RETURN_IF_ERROR(w.Key("fma_reason"));
    p.fma_reason = w.Rest();
  }
  return p;
}

absl::Status ParseLine(const StateLine& line, const Names& n,
                       const std::map<int, ir::Buffer>& declared,
                       LoweringState& st) {
  Words w(line.number, line.text);
  TESSEL_ASSIGN_OR_RETURN(std::string key, w.Word());
  auto as_int = [&](auto* out) -> absl::Status {
    TESSEL_ASSIGN_OR_RETURN(int64_t v, w.Int());
    *out = static_cast<std::remove_reference_t<decltype(*out)>>(v);
    return absl::OkStatus();
  };
  if (key == "threads") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.threads));
  } else if (key == "producer_threads") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.producer_threads));
  } else if (key == "consumer_groups") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.consumer_groups));
  } else if (key == "persistent") {
    st.persistent = true;
  } else if (key == "tile_block_var") {
    TESSEL_ASSIGN_OR_RETURN(ir::Var v, VarOf(n, w));
    TESSEL_ASSIGN_OR_RETURN(int64_t extent, w.Int());
    st.tile_block_vars.emplace_back(v, extent);
  } else if (key == "tma_barrier") {
    TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, w));
    st.tma_barriers.insert(b.get());
  } else if (key == "cluster") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.cluster_size));
    TESSEL_ASSIGN_OR_RETURN(std::string var, w.Word());
    TESSEL_ASSIGN_OR_RETURN(std::string empty, w.Word());
    if (var != "-") {
      Words one(line.number, var);
      TESSEL_ASSIGN_OR_RETURN(st.cluster_var, VarOf(n, one));
    }
    if (empty != "-") {
      Words one(line.number, empty);
      TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, one));
      st.cluster_empty = b.get();
    }
  } else if (key == "wgmma_overlap_loop") {
    TESSEL_ASSIGN_OR_RETURN(ir::Stmt s, StmtOf(n, w));
    const auto* f = s.As<ir::ForNode>();
    if (!f) return w.Error("not a loop");
    st.wgmma_overlap_loops.insert(f->var.get());
  } else if (key == "epilogue_store") {
    TESSEL_ASSIGN_OR_RETURN(ir::Stmt copy, StmtOf(n, w));
    TESSEL_ASSIGN_OR_RETURN(int64_t buffers, w.Int());
    st.epilogue_stores.push_back(
        {copy, declared.at(line.number), static_cast<int>(buffers)});
  } else if (key == "thread_var") {
    TESSEL_ASSIGN_OR_RETURN(st.thread_var, VarOf(n, w));
  } else if (key == "specialize_declined") {
    st.specialize_declined = w.Rest();
  } else if (key == "layout") {
    TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, w));
    TESSEL_ASSIGN_OR_RETURN(FragmentLayout l, ParseLayout(w));
    st.layouts.emplace(b.get(), l);
  } else if (key == "wgmma_declined") {
    TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, w));
    st.wgmma_declined.insert(b.get());
  } else if (key == "smem_total") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.smem.total_bytes));
  } else if (key == "smem_scratch") {
    TESSEL_RETURN_IF_ERROR(as_int(&st.smem.scratch_offset));
    TESSEL_RETURN_IF_ERROR(as_int(&st.smem.scratch_bytes));
  } else if (key == "smem") {
    TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, w));
    TESSEL_ASSIGN_OR_RETURN(int64_t offset, w.Int());
    TESSEL_ASSIGN_OR_RETURN(int64_t bytes, w.Int());
    st.smem.offset[b.get()] = offset;
    if (bytes >= 0) st.smem.bytes[b.get()] = bytes;
  } else if (key == "scratch") {
    TESSEL_ASSIGN_OR_RETURN(ir::Stmt op, StmtOf(n, w));
    if (w.Peek() == "as") {  // the buffer of an earlier scratch line
      TESSEL_RETURN_IF_ERROR(w.Key("as"));
      TESSEL_ASSIGN_OR_RETURN(int64_t first, w.Int());
      if (first < 0 || first >= static_cast<int64_t>(st.smem.scratch.size()))
        return w.Error(absl::StrCat("no scratch line ", first));
      st.smem.scratch.emplace_back(op, st.smem.scratch[first].second);
    } else {
      const ir::Buffer& b = declared.at(line.number);
      TESSEL_ASSIGN_OR_RETURN(std::string offset, w.Word());
      TESSEL_ASSIGN_OR_RETURN(std::string bytes, w.Word());
      Words placed(line.number, absl::StrCat(offset, " ", bytes));
      if (offset != "-") {
        TESSEL_ASSIGN_OR_RETURN(st.smem.offset[b.get()], placed.Int());
      } else {
        TESSEL_RETURN_IF_ERROR(placed.Key("-"));
      }
      if (bytes != "-") {
        TESSEL_ASSIGN_OR_RETURN(st.smem.bytes[b.get()], placed.Int());
      }
      st.smem.scratch.emplace_back(op, b);
    }
  } else if (key == "gemm") {
    ir::Stmt g;
    if (w.Peek() == "-") {  // lowered: a stand-in on its operands, c a b
      TESSEL_RETURN_IF_ERROR(w.Key("-"));
      TESSEL_ASSIGN_OR_RETURN(ir::Buffer c, BufferOf(n, w));
      TESSEL_ASSIGN_OR_RETURN(ir::Buffer a, BufferOf(n, w));
      TESSEL_ASSIGN_OR_RETURN(ir::Buffer b, BufferOf(n, w));
      g = ir::MakeStmt<ir::GemmNode>(
          ir::Region::Full(a), ir::Region::Full(b), ir::Region::Full(c), false,
          false, false, ir::GemmWarpPolicy::kSquare, ir::SourceLoc());
    } else {
      TESSEL_ASSIGN_OR_RETURN(g, StmtOf(n, w));
    }
    if (!g.As<ir::GemmNode>()) return w.Error("not a gemm");
    TESSEL_ASSIGN_OR_RETURN(GemmPlan plan, ParseGemmPlan(w));
    st.gemm_plans.push_back({g, plan});
  } else if (key == "alignment") {
    AlignmentRequirement a;
    TESSEL_RETURN_IF_ERROR(as_int(&a.param));
    TESSEL_RETURN_IF_ERROR(as_int(&a.multiple));
    a.reason = w.Rest();
    st.alignment.push_back(a);
  } else if (key == "tensor_map") {
    TensorMapParam t;
    TESSEL_RETURN_IF_ERROR(as_int(&t.param));
    TESSEL_ASSIGN_OR_RETURN(t.name, w.Word());
    TESSEL_RETURN_IF_ERROR(w.Key("swizzle"));
    TESSEL_RETURN_IF_ERROR(as_int(&t.swizzle_bytes));
    TESSEL_RETURN_IF_ERROR(w.Key("box"));
    while (!w.done()) {
      TESSEL_ASSIGN_OR_RETURN(int64_t b, w.Int());
      t.box.push_back(b);
    }
    st.tensor_maps.push_back(t);
  } else {
    return w.Error(absl::StrCat("unknown fact '", key, "'"));
  }
  if (!w.done()) return w.Error(absl::StrCat("unexpected '", w.Rest(), "'"));
  return absl::OkStatus();
}

// How many words precede the buffer declaration of a state line: "scratch
// 12 0 8192 red = T.alloc_shared(...)", "epilogue_store 30 2 stage = ...";
// 0 for lines without one.
int DeclarationAt(const std::string& line) {
  std::vector<std::string> w = absl::StrSplit(line, ' ');
  if (w[0] == "scratch") return w.size() > 2 && w[2] == "as" ? 0 : 4;
  return w[0] == "epilogue_store" ? 3 : 0;
}

}  // namespace

absl::StatusOr<StateDump> ParseStateDump(std::string_view text,
                                         const Target& target,
                                         const PassConfig& config) {
  std::vector<StateLine> lines;
  bool in_state = false;
  int number = 0;
  for (absl::string_view l :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++number;
    if (l == "# state") {
      in_state = true;
    } else if (in_state && absl::StartsWith(l, "#   ")) {
      lines.push_back({number, std::string(l.substr(4))});
    } else {
      in_state = false;
    }
  }
  // Declarations first: the program uses them.
  std::map<int, ir::Buffer> declared;
  std::vector<ir::Buffer> buffers;
  for (const StateLine& l : lines) {
    int skip = DeclarationAt(l.text);
    if (skip == 0) continue;
    std::vector<std::string> parts =
        absl::StrSplit(l.text, absl::MaxSplits(' ', skip));
    if (static_cast<int>(parts.size()) <= skip)
      return absl::InvalidArgumentError(
          absl::StrCat(l.number, ": state: a declaration is missing"));
    absl::StatusOr<ir::Buffer> b = ir::ParseBufferDeclaration(parts[skip]);
    if (!b.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(l.number, ": state: ", b.status().message()));
    declared[l.number] = *b;
    buffers.push_back(*b);
  }
  TESSEL_ASSIGN_OR_RETURN(ir::Program program, ir::ParseProgram(text, buffers));
  LoweringState st;
  st.program = std::move(program);
  st.target = target;
  st.config = config;
  Names names(st.program, buffers);
  for (StateLine& l : lines) {
    auto it = declared.find(l.number);
    if (it != declared.end()) {  // the declaration was read above
      int keep = DeclarationAt(l.text);
      std::vector<std::string> parts =
          absl::StrSplit(l.text, absl::MaxSplits(' ', keep));
      parts.resize(keep);
      l.text = absl::StrJoin(parts, " ");
    }
    TESSEL_RETURN_IF_ERROR(ParseLine(l, names, declared, st));
  }
  return StateDump{st.program, std::move(st)};
}

}  // namespace tessel::passes
