// Element accesses of global tensors (`scales[bx * 64 + n, g]`, `Out[i] =
// v`, the element form of the atomics): the boundary rule of docs/ir.md, the
// one tile copies follow, spelled per element. An index that the loop and
// block ranges, the tensor's sizes or an enclosing condition prove inside
// [0, dim) costs nothing; any other gets its check: outside, a load reads 0
// and a store or atomic is skipped, exactly as the interpreter runs it.
//
// Inside a T.Parallel loop the checks are decided before its variables
// become thread indices (GuardParallelBody), in the loop's own ranges.
#include "src/ir/arith/equal.h"
#include "src/ir/arith/interval.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes::lower {
namespace {

using ir::BinaryOp;

const ir::BinaryNode* AsBinary(const Expr& e, BinaryOp op) {
  const auto* b = e.As<ir::BinaryNode>();
  return b != nullptr && b->op == op ? b : nullptr;
}

// What the guards may assume: variables' ranges and the known facts.
class Facts {
 public:
  Facts(const ThreadContext& t, const ir::Program& program) : t_(t) {
    for (const auto& [var, r] : t.ranges_) ranges_.Set(var, {r.lo, r.hi, true});
    for (const auto& [var, l] : t.loop_extents_) {
      auto mn = ir::AsConstInt(l.min), ex = ir::AsConstInt(l.extent);
      if (mn && ex && *ex > 0 && !t.ranges_.count(var))
        ranges_.Set(var, {*mn, *mn + *ex - 1, true});
    }
    for (const ir::Var& d : program.dims) dims_.insert(d.get());
  }

  bool NonNegative(const Expr& e) const {
    if (auto b = ranges_.Bounds(e)) return b->lo >= 0;
    if (Known(BinaryOp::kGE, e, ir::Zero(e.dtype()))) return true;
    if (const auto* v = e.As<ir::VarNode>()) {
      if (dims_.count(v)) return true;  // sizes are >= 1 at launch
      auto it = t_.loop_extents_.find(v);
      return it != t_.loop_extents_.end() && NonNegative(it->second.min);
    }
    if (const auto* c = e.As<ir::CastNode>())
      return is_int(c->value.dtype()) && NonNegative(c->value);
    const auto* b = e.As<ir::BinaryNode>();
    if (b == nullptr) return false;
    switch (b->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kMul:
      case BinaryOp::kDiv:
      case BinaryOp::kCeilDiv:
      case BinaryOp::kMin:
        return NonNegative(b->a) && NonNegative(b->b);
      case BinaryOp::kMax:
        return NonNegative(b->a) || NonNegative(b->b);
      case BinaryOp::kMod:  // floor modulo by a positive constant
        return ir::AsConstInt(b->b).value_or(0) > 0;
      case BinaryOp::kSub:  // a size minus at most 1
        return b->a.As<ir::VarNode>() != nullptr &&
               dims_.count(b->a.As<ir::VarNode>()) &&
               ir::AsConstInt(b->b).value_or(2) <= 1;
      default:
        return false;
    }
  }

  // e < dim for every value of the variables.
  bool Below(const Expr& e, const Expr& dim) const {
    if (auto b = ranges_.Bounds(e)) {
      if (auto d = ir::AsConstInt(dim)) return b->hi < *d;
      if (IsDim(dim) && b->hi < 1) return true;
    }
    if (Known(BinaryOp::kLT, e, dim)) return true;
    if (const auto* v = e.As<ir::VarNode>()) {
      auto it = t_.loop_extents_.find(v);
      return it != t_.loop_extents_.end() &&
             ir::IsConstInt(it->second.min, 0) &&
             ir::ExprDeepEqual(it->second.extent, dim);
    }
    if (const auto* b = AsBinary(e, BinaryOp::kMin))
      return Below(b->a, dim) || Below(b->b, dim);
    // v * c with v < ceildiv(dim, c): a block's first row.
    if (const auto* b = AsBinary(e, BinaryOp::kMul)) {
      const auto* v = b->a.As<ir::VarNode>();
      auto c = ir::AsConstInt(b->b);
      auto it =
          v != nullptr ? t_.loop_extents_.find(v) : t_.loop_extents_.end();
      if (c && *c > 0 && it != t_.loop_extents_.end() &&
          ir::IsConstInt(it->second.min, 0)) {
        const auto* cd = AsBinary(it->second.extent, BinaryOp::kCeilDiv);
        return cd != nullptr && ir::ExprDeepEqual(cd->a, dim) &&
               ir::IsConstInt(cd->b, *c);
      }
    }
    // dim - c with c >= 1 (a clamp to the last element).
    if (const auto* b = AsBinary(e, BinaryOp::kSub))
      return ir::ExprDeepEqual(b->a, dim) &&
             ir::AsConstInt(b->b).value_or(0) >= 1;
    return false;
  }

 private:
  bool IsDim(const Expr& e) const {
    const auto* v = e.As<ir::VarNode>();
    return v != nullptr && dims_.count(v);
  }
  // A fact `x op y` (or its mirror: x < y is y > x).
  bool Known(BinaryOp op, const Expr& x, const Expr& y) const {
    BinaryOp mirror = op == BinaryOp::kLT ? BinaryOp::kGT : BinaryOp::kLE;
    for (const Expr& f : t_.facts_) {
      const auto* b = f.As<ir::BinaryNode>();
      if (b == nullptr) continue;
      if (b->op == op && ir::ExprDeepEqual(b->a, x) &&
          ir::ExprDeepEqual(b->b, y))
        return true;
      if (b->op == mirror && ir::ExprDeepEqual(b->a, y) &&
          ir::ExprDeepEqual(b->b, x))
        return true;
    }
    return false;
  }

  const ThreadContext& t_;
  ir::arith::VarRanges ranges_;
  std::unordered_set<const ir::VarNode*> dims_;
};

}  // namespace

Expr ThreadContext::ElementInBounds(const ir::Buffer& b,
                                    const std::vector<Expr>& idx) {
  if (b->scope != ir::Scope::kGlobal ||
      idx.size() != static_cast<size_t>(b->rank()))
    return Expr();
  const Facts facts(*this, st_.program);
  Expr cond;
  for (size_t d = 0; d < idx.size(); ++d) {
    const Expr& i = idx[d];
    if (!facts.NonNegative(i)) cond = And(cond, i >= ir::Zero(i.dtype()));
    if (!facts.Below(i, b->shape[d]))
      cond = And(cond, i < Cast(i.dtype(), b->shape[d]));
  }
  return cond;
}

bool ThreadContext::ProvablyNonNegative(const Expr& i) {
  return Facts(*this, st_.program).NonNegative(i);
}

size_t ThreadContext::Assume(const Expr& cond) {
  const size_t before = facts_.size();
  std::vector<Expr> pending{cond};
  while (!pending.empty()) {  // a && b && c: each of them
    Expr c = pending.back();
    pending.pop_back();
    if (const auto* b = AsBinary(c, BinaryOp::kAnd)) {
      pending.push_back(b->a);
      pending.push_back(b->b);
    } else {
      facts_.push_back(c);
    }
  }
  return before;
}

// The element accesses of a T.Parallel body, guarded in the loop's own
// variables (vars[i] in [0, extents[i])). Lowering the body afterwards
// leaves them as they are (in_parallel_).
Stmt Lowerer::GuardParallelBody(const Stmt& body,
                                const std::vector<ir::Var>& vars,
                                const std::vector<int64_t>& extents) {
  for (size_t i = 0; i < vars.size(); ++i)
    loop_extents_[vars[i].get()] = {Expr(0), Expr(int(extents[i]))};
  class G : public ir::IRMutator {
   public:
    ThreadContext* t;
    Expr Visit(const ir::LoadNode* op) override {
      Expr e = IRMutator::Visit(op);
      const auto* l = e.As<ir::LoadNode>();
      Expr cond = t->ElementInBounds(l->buffer, l->indices);
      return cond.defined() ? ir::Select(cond, e, ir::Zero(e.dtype())) : e;
    }
    Stmt Visit(const ir::StoreNode* op) override {
      Stmt s = IRMutator::Visit(op);
      return Guard(
          t->ElementInBounds(op->buffer, s.As<ir::StoreNode>()->indices), s);
    }
    Stmt Visit(const ir::AtomicNode* op) override {
      Stmt s = IRMutator::Visit(op);
      if (op->src) return s;
      return Guard(
          t->ElementInBounds(op->dst.buffer, s.As<ir::AtomicNode>()->dst.start),
          s);
    }
    Stmt Visit(const ir::ForNode* op) override {
      t->loop_extents_[op->var.get()] = {op->min, op->extent};
      return IRMutator::Visit(op);
    }
    Stmt Visit(const ir::IfThenElseNode* op) override {
      Expr cond = MutateExpr(op->cond);
      const size_t n = t->Assume(op->cond);
      Stmt then_case = MutateStmt(op->then_case);
      t->facts_.resize(n);
      Stmt else_case = MutateStmt(op->else_case);
      return ir::MakeStmt<ir::IfThenElseNode>(cond, then_case, else_case,
                                              op->loc);
    }
    Expr Visit(const ir::SelectNode* op) override {
      Expr cond = MutateExpr(op->cond);
      const size_t n = t->Assume(op->cond);
      Expr a = MutateExpr(op->true_value);
      t->facts_.resize(n);
      return ir::Select(cond, a, MutateExpr(op->false_value));
    }
  } g;
  g.t = this;
  return g.MutateStmt(body);
}

// Outside T.Parallel loops the lowering's own walk knows the facts: the
// conditions of selects (the user's `T::select(i < n, X(i), 0)` idiom).
Expr Lowerer::Visit(const ir::SelectNode* op) {
  Expr cond = MutateExpr(op->cond);
  const size_t n = Assume(op->cond);
  Expr a = MutateExpr(op->true_value);
  facts_.resize(n);
  Expr b = MutateExpr(op->false_value);
  if (cond.same_as(op->cond) && a.same_as(op->true_value) &&
      b.same_as(op->false_value))
    return Self(op);
  return ir::Select(cond, a, b);
}

}  // namespace tessel::passes::lower
