// T.Parallel loops: a loop over each thread's local elements of the
// fragment that drives it, fragment accesses mapped to local array elements.
#include "src/passes/lower/lowerer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/printer.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {
namespace {

// How a fragment's elements sit on the threads, in the user's words.
const char* Placement(const FragmentLayout& l) {
  switch (l.kind()) {
    case FragmentLayout::Kind::kMma:
    case FragmentLayout::Kind::kMmaRows:
    case FragmentLayout::Kind::kMmaCols:
      return "spread over the threads as a gemm accumulator";
    case FragmentLayout::Kind::kRows:
    case FragmentLayout::Kind::kRowStats:
    case FragmentLayout::Kind::kRowCols:
      return "spread over the threads by rows";
    case FragmentLayout::Kind::kBlocked:
      return "spread over the threads in blocks";
    case FragmentLayout::Kind::kReplicated:
      return "held whole by every thread";
  }
  return "spread over the threads";
}

std::string Shape(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// An index of a T.Parallel loop's access in the user's words: its loop
// variables have no names of the user's, so not the printer's either.
std::string IndexInWords(const Expr& e,
                         const std::vector<const ir::VarNode*>& vars) {
  static const char* const kOrdinal[] = {"first", "second", "third", "fourth"};
  for (size_t k = 0; k < vars.size(); ++k) {
    if (e.get() != vars[k]) continue;
    if (vars.size() == 1) return "the loop index";
    return absl::StrCat("the ", k < 4 ? kOrdinal[k] : "next", " loop index");
  }
  for (const ir::VarNode* v : vars)
    if (ir::UsesVar(e, v)) return "an expression of the loop indices";
  return ir::ToString(e);
}

}  // namespace

// ------------------------------------------------------------ Parallel
Stmt Lowerer::LowerParallel(const ir::ForNode* op) {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Var> var_handles;
  std::vector<int64_t> extents;
  const ir::ForNode* f = op;
  while (true) {
    auto e = ir::AsConstInt(f->extent);
    if (!e || !ir::IsConstInt(f->min, 0)) {
      Fail(f, "a T.Parallel loop needs a constant extent starting at 0");
      return Self(op);
    }
    vars.push_back(f->var.get());
    var_handles.push_back(f->var);
    extents.push_back(*e);
    const auto* inner = f->body.As<ir::ForNode>();
    if (inner == nullptr || inner->for_kind != ir::ForKind::kParallel) break;
    f = inner;
  }
  Stmt body = f->body;
  // The driving layout: a fragment indexed by exactly the loop's vars.
  std::optional<FragmentLayout> driver;
  std::string over = Shape(extents);  // what the loop runs over, for errors
  ForEachFragmentAccess(body,
                        [&](const ir::Buffer& b, const std::vector<Expr>& idx) {
                          if (driver || idx.size() != vars.size()) return;
                          for (size_t i = 0; i < idx.size(); ++i)
                            if (idx[i].get() != vars[i]) return;
                          driver = Layout(b);
                          over = absl::StrCat(b->name, " ", over);
                        });
  if (!driver) driver = FragmentLayout::Blocked(extents, st_.threads, 1);
  // A replicated fragment stored at other indices than the loop's variables:
  // every thread runs every iteration (layout_inference/fragment_layouts.cc).
  ForEachFragmentAccess(
      body,
      [&](const ir::Buffer& b, const std::vector<Expr>& idx) {
        bool at_vars = idx.size() == vars.size();
        for (size_t i = 0; at_vars && i < idx.size(); ++i)
          at_vars = idx[i].get() == vars[i];
        if (!at_vars && Layout(b).kind() == FragmentLayout::Kind::kReplicated)
          driver = FragmentLayout::Replicated(extents, st_.threads);
      },
      /*loads=*/false);
  if (driver->shape() != extents) {
    Fail(op,
         absl::StrCat("a T.Parallel loop over ", Shape(extents),
                      " indexes a fragment of shape ", Shape(driver->shape()),
                      " by its variables; loop over the fragment's shape"));
    return Self(op);
  }
  const FragmentLayout d = *driver;
  std::vector<int64_t> ls = d.local_shape();
  std::vector<ir::Var> lvars;
  std::vector<Expr> local;
  for (size_t i = 0; i < ls.size(); ++i) {
    lvars.emplace_back(absl::StrCat(vars[0]->name, "_l", i));
    local.push_back(lvars.back());
    ranges_[lvars.back().get()] = {0, ls[i] - 1};
  }
  std::vector<Expr> logical = d.Logical(tx_, local);
  // Fragment accesses -> local array elements.
  Stmt mapped = MapFragments(op, body, vars, d, over, local);
  if (!status.ok()) return Self(op);
  Expr leader = d.Leader(tx_);
  if (leader.defined()) mapped = GuardSideEffects(mapped, leader);
  mapped = GuardParallelBody(mapped, var_handles, extents);
  VarMap sub;
  for (size_t i = 0; i < vars.size(); ++i) sub[vars[i]] = logical[i];
  mapped = Substitute(mapped, sub);
  in_parallel_++;
  mapped = MutateStmt(mapped);
  in_parallel_--;
  mapped = Guard(d.Valid(tx_, local), mapped);
  int64_t total = 1;
  for (int64_t e : ls) total *= e;
  for (int i = static_cast<int>(ls.size()) - 1; i >= 0; --i) {
    ir::ForKind k =
        total <= 256 || i > 0 ? ir::ForKind::kUnrolled : ir::ForKind::kSerial;
    mapped = MakeFor(lvars[i], 0, Expr(int(ls[i])), k, mapped);
  }
  return mapped;
}

void Lowerer::ForEachFragmentAccess(
    const Stmt& s,
    const std::function<void(const ir::Buffer&, const std::vector<Expr>&)>& fn,
    bool loads) {
  struct V : ir::IRVisitor {
    const std::function<void(const ir::Buffer&, const std::vector<Expr>&)>* fn;
    bool loads = true;
    void Visit(const ir::LoadNode* op) override {
      if (loads && op->buffer->scope == ir::Scope::kFragment)
        (*fn)(op->buffer, op->indices);
      IRVisitor::Visit(op);
    }
    void Visit(const ir::StoreNode* op) override {
      if (op->buffer->scope == ir::Scope::kFragment)
        (*fn)(op->buffer, op->indices);
      IRVisitor::Visit(op);
    }
  } v;
  v.fn = &fn;
  v.loads = loads;
  v.VisitStmt(s);
}

// Rewrites F[i, j] (F laid out as the driver) and r[i] (the driver's rows)
// to the local array elements the loop's local indices name.
Stmt Lowerer::MapFragments(const ir::ForNode* loop, const Stmt& body,
                           const std::vector<const ir::VarNode*>& vars,
                           const FragmentLayout& d, const std::string& over,
                           const std::vector<Expr>& local) {
  class M : public ir::IRMutator {
   public:
    Lowerer* self;
    const std::vector<const ir::VarNode*>* vars;
    const FragmentLayout* d;
    const std::string* over;
    const std::vector<Expr>* local;
    std::optional<std::vector<Expr>> Map(const ir::Buffer& b,
                                         const std::vector<Expr>& idx) {
      const FragmentLayout& l = self->Layout(b);
      bool full = idx.size() == vars->size();
      for (size_t i = 0; full && i < idx.size(); ++i)
        full = idx[i].get() == (*vars)[i];
      if (full && l == *d) return *local;
      if (l.kind() == FragmentLayout::Kind::kReplicated &&
          (!is_store || d->kind() == FragmentLayout::Kind::kReplicated)) {
        std::vector<Expr> shape;
        for (int64_t x : l.shape()) shape.push_back(Expr(int(x)));
        return std::vector<Expr>{FlatIndex(shape, idx)};
      }
      if (d->kind() == FragmentLayout::Kind::kMma &&
          l.kind() == FragmentLayout::Kind::kMmaRows && idx.size() == 1 &&
          idx[0].get() == (*vars)[0] && l == d->RowsOf()) {
        return std::vector<Expr>{(*local)[0], (*local)[2] / 2};
      }
      if (d->kind() == FragmentLayout::Kind::kRows &&
          l.kind() == FragmentLayout::Kind::kRowStats && idx.size() == 1 &&
          idx[0].get() == (*vars)[0] && l == d->RowsOf()) {
        return std::vector<Expr>{(*local)[0]};
      }
      // A 1-D tile broadcast over the driver's rows: its columns.
      const bool cols = vars->size() == 2 && idx.size() == 1 &&
                        idx[0].get() == (*vars)[1] &&
                        (d->kind() == FragmentLayout::Kind::kMma ||
                         d->kind() == FragmentLayout::Kind::kRows) &&
                        l == d->ColsOf();
      if (cols && l.kind() == FragmentLayout::Kind::kMmaCols)
        return std::vector<Expr>{(*local)[1], (*local)[2] % 2};
      if (cols) return std::vector<Expr>{(*local)[1], (*local)[2]};
      // Every such access of the loop is reported at once, after the walk.
      std::vector<std::string> at_idx;
      for (const Expr& e : idx) at_idx.push_back(IndexInWords(e, *vars));
      std::string what =
          absl::StrCat("fragment ", b->name, " ", Shape(l.shape()), " (",
                       Placement(l), ") is ", is_store ? "stored" : "read",
                       " at [", absl::StrJoin(at_idx, ", "), "]");
      if (std::find(problems.begin(), problems.end(), what) == problems.end())
        problems.push_back(what);
      if (std::find(names.begin(), names.end(), b->name) == names.end())
        names.push_back(b->name);
      if (first_at == nullptr) first_at = at;
      return std::nullopt;
    }
    bool is_store = false;
    const ir::StmtNode* at = nullptr;
    // The accesses no thread can reach, the buffers, and the user's line
    // of the first (the store it is part of, else the loop).
    std::vector<std::string> problems, names;
    const ir::StmtNode* first_at = nullptr;
    Expr Visit(const ir::LoadNode* op) override {
      Expr e = IRMutator::Visit(op);
      if (op->buffer->scope != ir::Scope::kFragment) return e;
      is_store = false;
      auto idx = Map(op->buffer, op->indices);
      if (!idx) return e;
      return ir::Load(self->Local(op->buffer), *idx);
    }
    ir::Stmt Visit(const ir::StoreNode* op) override {
      const ir::StmtNode* outer = at;
      at = op;
      ir::Stmt s = IRMutator::Visit(op);
      at = outer;
      if (op->buffer->scope != ir::Scope::kFragment) return s;
      is_store = true;
      at = op;
      auto idx = Map(op->buffer, op->indices);
      at = outer;
      if (!idx) return s;
      const auto* st = s.As<ir::StoreNode>();
      return ir::MakeStmt<ir::StoreNode>(self->Local(op->buffer), *idx,
                                         st->value, st->loc);
    }
  } m;
  m.self = this;
  m.at = loop;
  m.vars = &vars;
  m.d = &d;
  m.over = &over;
  m.local = &local;
  Stmt out = m.MutateStmt(body);
  if (!m.problems.empty()) {
    Fail(m.first_at,
         absl::StrCat(
             absl::StrJoin(m.problems, "; "), " in the T.Parallel loop at ",
             ir::FormatLoc(loop->loc), " over ", over, ", whose elements are ",
             Placement(d),
             " (another loop, copy or gemm placed the fragments), so no "
             "thread holds both; keep ",
             absl::StrJoin(m.names, ", "),
             " in shared memory (T::alloc_shared), which every thread may "
             "read at any index"));
  }
  return out;
}

// Stores to shared/global memory and atomics run once per element, in
// the leading replica.
Stmt Lowerer::GuardSideEffects(const Stmt& s, const Expr& leader) {
  class G : public ir::IRMutator {
   public:
    Expr leader;
    ir::Stmt Visit(const ir::StoreNode* op) override {
      if (op->buffer->scope == ir::Scope::kGlobal ||
          op->buffer->scope == ir::Scope::kShared)
        return MakeIf(leader, Self(op));
      return Self(op);
    }
    ir::Stmt Visit(const ir::AtomicNode* op) override {
      return MakeIf(leader, Self(op));
    }
  } g;
  g.leader = leader;
  return g.MutateStmt(s);
}

}  // namespace tessel::passes::lower
