// Scopes (kernel, loops, branches, allocations), element loads and
// stores, and the annotations: where variables and buffers live, the
// kernel's grid and loop ranges, element dtypes and bounds.
#include "src/ir/verifier/verifier_visitor.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel::ir {

using arith::Interval;

void Verifier::VisitBuffer(const Buffer& b) {
  if (!b.defined()) {
    Fail("use of an undefined buffer");
    return;
  }
  if (!live_buffers_.count(b.get())) {
    Fail(absl::StrCat(
        "buffer ", Describe(b),
        " is used outside its scope (its allocation's scope has ended, or it "
        "belongs to another program)"));
  }
}

void Verifier::Visit(const VarNode* op) {
  if (!live_vars_.count(op)) {
    Fail(absl::StrCat(
        "variable ", op->name,
        " is used outside its scope (the loop or kernel that defines it has "
        "ended, or it belongs to another program)"));
  }
}

void Verifier::Visit(const LoadNode* op) {
  IRVisitor::Visit(op);
  if (!status_.ok()) return;
  if (op->buffer->scope == Scope::kBarrier) {
    Fail(absl::StrCat("load from ", Describe(op->buffer),
                      ", an mbarrier array"));
    return;
  }
  if (!CheckIndices(op->buffer, op->indices, "load")) return;
  {
    // Global tensors too: an element wholly outside one (CheckBounds' rule
    // for global buffers) is read on no launch the shapes allow.
    std::vector<Expr> ones(op->indices.size(), IntImm(DataType::kI32, 1));
    CheckBounds(op->buffer, op->indices, ones,
                absl::StrCat("load ", op->buffer->name, "[",
                             absl::StrJoin(op->indices, ", ",
                                           [](std::string* out, const Expr& e) {
                                             out->append(ToString(e));
                                           }),
                             "]"));
  }
}

void Verifier::Visit(const KernelNode* op) {
  if (kernel_depth_ > 0) {
    Fail("a kernel nested inside another kernel");
    return;
  }
  if (op->grid.empty() || op->grid.size() > 3 ||
      op->grid.size() != op->block_vars.size()) {
    Fail(absl::StrCat(
        "a kernel has 1 to 3 grid dims with one block index each; got ",
        op->grid.size(), " dims and ", op->block_vars.size(), " indices"));
    return;
  }
  if (op->threads < 1 || op->threads > 1024) {
    Fail(absl::StrCat("threads = ", op->threads,
                      "; a block has 1 to 1024 threads"));
    return;
  }
  for (size_t d = 0; d < op->grid.size(); ++d) {
    const Expr& g = op->grid[d];
    VisitExpr(g);
    if (g.defined() && !is_int(g.dtype())) Fail("grid dims are integers");
    std::optional<int64_t> c = g.defined() ? AsConstInt(g) : std::nullopt;
    if (c && (*c < 1 || *c > kMaxGridDim[d])) {
      Fail(absl::StrCat("grid dimension ", d, " is ", *c, "; it must be 1 to ",
                        kMaxGridDim[d], " (CUDA's grid limit)"));
      return;
    }
  }
  for (size_t d = 0; d < op->grid.size(); ++d) {
    std::optional<Interval> g = ranges_.Bounds(op->grid[d]);
    Bind(op->block_vars[d],
         g ? std::optional<Interval>(Interval{0, g->hi - 1, g->lo == g->hi})
           : std::nullopt);
  }
  ++kernel_depth_;
  VisitStmt(op->body);
  --kernel_depth_;
  for (const Var& v : op->block_vars) Unbind(v);
}

void Verifier::Visit(const ForNode* op) {
  if (!NeedKernel()) return;
  if (op->num_stages < 0 || op->num_stages > kMaxNumStages) {
    Fail(absl::StrCat(
        "num_stages = ", op->num_stages,
        op->num_stages < 0
            ? " is negative"
            : absl::StrCat("; tessel takes at most ", kMaxNumStages)));
    return;
  }
  if (!op->order.empty() && !op->stage.empty() &&
      op->order.size() != op->stage.size()) {
    Fail("order and stage lists differ in length");
    return;
  }
  VisitExpr(op->min);
  VisitExpr(op->extent);
  if (!op->min.defined() || !op->extent.defined() || !is_int(op->min.dtype()) ||
      !is_int(op->extent.dtype())) {
    Fail("loop bounds must be integer expressions");
    return;
  }
  std::optional<Interval> lo = ranges_.Bounds(op->min),
                          n = ranges_.Bounds(op->extent);
  std::optional<Interval> range;
  if (lo && n && n->lo == n->hi && lo->lo == lo->hi && n->lo > 0) {
    range = Interval{lo->lo, lo->lo + n->lo - 1, true};
  }
  bool parallel = op->for_kind == ForKind::kParallel;
  // A serial loop whose bounds differ between threads runs its body a
  // different number of times in each: per-thread control, as an If's.
  std::optional<std::string> per_thread =
      PerThreadReason(op->min, parallel_vars_);
  if (!per_thread) per_thread = PerThreadReason(op->extent, parallel_vars_);
  const DivergentControl saved = divergent_;
  if (per_thread && !parallel && divergent_.why.empty()) {
    divergent_ = {loc_, absl::StrCat("a loop whose bounds differ between "
                                     "threads (",
                                     *per_thread, ")")};
  }
  parallel_depth_ += parallel;
  if (parallel) parallel_vars_.insert(op->var.get());
  Bind(op->var, range);
  VisitStmt(op->body);
  Unbind(op->var);
  if (parallel) parallel_vars_.erase(op->var.get());
  parallel_depth_ -= parallel;
  divergent_ = saved;
}

void Verifier::Visit(const IfThenElseNode* op) {
  if (!NeedKernel()) return;
  VisitExpr(op->cond);
  if (op->cond.defined() && op->cond.dtype() != DataType::kBool) {
    Fail(absl::StrCat("the condition ", ToString(op->cond), " is not bool"));
    return;
  }
  const DivergentControl saved = divergent_;
  if (divergent_.why.empty()) {
    if (std::optional<std::string> why =
            PerThreadReason(op->cond, parallel_vars_)) {
      divergent_ = {loc_,
                    absl::StrCat("a T::If whose condition ", ToString(op->cond),
                                 " differs between threads (", *why, ")")};
    }
  }
  VisitStmt(op->then_case);
  VisitStmt(op->else_case);
  divergent_ = saved;
}

void Verifier::Visit(const StoreNode* op) {
  if (!NeedKernel()) return;
  IRVisitor::Visit(op);
  if (!status_.ok()) return;
  if (op->buffer->scope == Scope::kBarrier) {
    Fail(
        absl::StrCat("store to ", Describe(op->buffer), ", an mbarrier array"));
    return;
  }
  if (!CheckIndices(op->buffer, op->indices, "store")) return;
  if (!op->value.defined() || op->value.dtype() != op->buffer->dtype) {
    Fail(absl::StrCat("stored value has dtype ",
                      op->value.defined()
                          ? std::string(dtype_name(op->value.dtype()))
                          : "none",
                      " but ", Describe(op->buffer), " holds ",
                      std::string(dtype_name(op->buffer->dtype))));
    return;
  }
  {
    // Global tensors too (wholly outside: written past the tensor).
    std::vector<Expr> ones(op->indices.size(), IntImm(DataType::kI32, 1));
    CheckBounds(op->buffer, op->indices, ones, "the stored element");
  }
  if (status_.ok() && op->buffer->scope == Scope::kUniform)
    CheckUniformStore(*op);
}

// Every thread must assign a uniform variable alike: the same value, at
// the same points of the program.
void Verifier::CheckUniformStore(const StoreNode& op) {
  const std::string& name = op.buffer->name;
  if (parallel_depth_ > 0) {
    Fail(absl::StrCat(name, " (uniform ",
                      std::string(dtype_name(op.buffer->dtype)),
                      ") is assigned inside a Parallel loop, where each thread "
                      "runs other iterations; assign it outside the loop "
                      "(or use T::alloc_var for a per-thread value)"));
    return;
  }
  if (!divergent_.why.empty()) {
    Fail(absl::StrCat(name, " (uniform) is assigned inside ", divergent_.why,
                      " at ", FormatLoc(divergent_.loc),
                      ", so threads would disagree on it"));
    return;
  }
  if (std::optional<std::string> why =
          PerThreadReason(op.value, parallel_vars_)) {
    Fail(absl::StrCat("the value ", ToString(op.value), " assigned to ", name,
                      " (uniform) is not the same in every thread of the "
                      "block: ",
                      *why));
  }
}

void Verifier::Visit(const AllocateNode* op) {
  if (!NeedKernel()) return;
  const Buffer& b = op->buffer;
  if (!b.defined() || b->scope == Scope::kGlobal) {
    Fail("allocations are shared, fragment, local, var or barrier buffers");
    return;
  }
  for (const Expr& d : b->shape) {
    std::optional<int64_t> c = AsConstInt(d);
    if (!c || *c <= 0) {
      Fail(absl::StrCat(Describe(b), ": tile shapes are positive numbers"));
      return;
    }
  }
  live_buffers_[b.get()]++;
  VisitStmt(op->body);
  if (--live_buffers_[b.get()] == 0) live_buffers_.erase(b.get());
}

void Verifier::Visit(const AnnotateLayoutNode* op) {
  if (!NeedKernel()) return;
  IRVisitor::Visit(op);
  if (status_.ok() && op->layout.kind == Layout::Kind::kSwizzled &&
      op->buffer->scope != Scope::kShared) {
    Fail(absl::StrCat("a swizzled layout is for shared tiles, not ",
                      Describe(op->buffer)));
  }
}

void Verifier::Visit(const UseSwizzleNode* op) {
  if (NeedKernel() && op->panel_size < 1) Fail("panel_size must be >= 1");
}

void Verifier::Visit(const PrintNode* op) {
  if (NeedKernel()) IRVisitor::Visit(op);
}

void Verifier::Visit(const EvaluateNode* op) {
  if (!NeedKernel()) return;
  // A let outside a statement list binds nothing anyone reads.
  if (std::optional<LetParts> let = AsLetCall(op->value))
    return VisitLet(*let, /*bind=*/false);
  IRVisitor::Visit(op);
}

// A let's variable is in scope for the rest of its statement list.
void Verifier::Visit(const SeqNode* op) {
  std::vector<const VarNode*> bound;
  for (const Stmt& s : op->stmts) {
    if (!status_.ok()) break;
    std::optional<LetParts> let = AsLet(s);
    if (!let || !NeedKernel()) {
      VisitStmt(s);
      continue;
    }
    SourceLoc saved = loc_;
    std::string saved_op = op_;
    if (s->loc.line() != 0) loc_ = s->loc;
    op_ = absl::StrCat("T::let ", let->var->name);
    VisitLet(*let, /*bind=*/true);
    if (status_.ok()) bound.push_back(let->var);
    loc_ = saved;
    op_ = saved_op;
  }
  for (const VarNode* v : bound) {
    if (--live_vars_[v] == 0) {
      live_vars_.erase(v);
      ranges_.Erase(v);
    }
  }
}

void Verifier::VisitLet(const LetParts& let, bool bind) {
  if (live_vars_.count(let.var)) {
    Fail(absl::StrCat("the variable ", let.var->name, " is bound twice"));
    return;
  }
  if (!let.value.defined() || let.value.dtype() != let.var->dtype) {
    Fail(absl::StrCat("the value of ", let.var->name, " has another dtype"));
    return;
  }
  VisitExpr(let.value);
  if (!status_.ok()) return;
  if (std::optional<std::string> why =
          PerThreadReason(let.value, parallel_vars_)) {
    Fail(absl::StrCat("the value ", ToString(let.value),
                      " is not the same in every thread of the block: ", *why));
    return;
  }
  if (parallel_depth_ > 0) {
    Fail(absl::StrCat(let.var->name,
                      " is bound inside a Parallel loop, where each thread "
                      "runs other iterations; bind it before the loop"));
    return;
  }
  if (bind) {
    live_vars_[let.var]++;
    if (std::optional<Interval> r = ranges_.Bounds(let.value))
      ranges_.Set(let.var, *r);
  }
}

}  // namespace tessel::ir
