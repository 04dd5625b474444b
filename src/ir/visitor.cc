#include "src/ir/visitor.h"

#include <cstdlib>
#include <iostream>

#include "src/ir/op.h"

namespace tessel::ir {
namespace {

bool SameExprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].same_as(b[i])) return false;
  }
  return true;
}

bool SameRegion(const Region& a, const Region& b) {
  return a.buffer.same_as(b.buffer) && SameExprs(a.start, b.start) &&
         SameExprs(a.extent, b.extent);
}

}  // namespace

void UnknownNodeKind(const char* what) {
  std::cerr << "tessel internal error: unknown " << what
            << " kind in visitor\n";
  std::abort();
}

// ---------------------------------------------------------------- IRVisitor

void IRVisitor::VisitExpr(const Expr& e) {
  if (!e.defined()) return;
  DispatchExpr(e, [this](const auto* node) { Visit(node); });
}

void IRVisitor::VisitStmt(const Stmt& s) {
  if (!s.defined()) return;
  DispatchStmt(s, [this](const auto* node) { Visit(node); });
}

void IRVisitor::VisitRegion(const Region& r) {
  VisitBuffer(r.buffer);
  for (const Expr& e : r.start) VisitExpr(e);
  for (const Expr& e : r.extent) VisitExpr(e);
}

void IRVisitor::Visit(const BinaryNode* op) {
  VisitExpr(op->a);
  VisitExpr(op->b);
}
void IRVisitor::Visit(const UnaryNode* op) { VisitExpr(op->a); }
void IRVisitor::Visit(const SelectNode* op) {
  VisitExpr(op->cond);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void IRVisitor::Visit(const CastNode* op) { VisitExpr(op->value); }
void IRVisitor::Visit(const MathNode* op) { VisitExpr(op->a); }
void IRVisitor::Visit(const CallNode* op) {
  for (const Expr& e : op->args) VisitExpr(e);
}
void IRVisitor::Visit(const LoadNode* op) {
  VisitBuffer(op->buffer);
  for (const Expr& e : op->indices) VisitExpr(e);
}

void IRVisitor::Visit(const KernelNode* op) {
  for (const Expr& e : op->grid) VisitExpr(e);
  VisitStmt(op->body);
}
void IRVisitor::Visit(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void IRVisitor::Visit(const IfThenElseNode* op) {
  VisitExpr(op->cond);
  VisitStmt(op->then_case);
  VisitStmt(op->else_case);
}
void IRVisitor::Visit(const StoreNode* op) {
  VisitBuffer(op->buffer);
  for (const Expr& e : op->indices) VisitExpr(e);
  VisitExpr(op->value);
}
void IRVisitor::Visit(const SeqNode* op) {
  for (const Stmt& s : op->stmts) VisitStmt(s);
}
void IRVisitor::Visit(const AllocateNode* op) {
  VisitBuffer(op->buffer);
  VisitStmt(op->body);
}
void IRVisitor::Visit(const CopyNode* op) {
  VisitRegion(op->src);
  VisitRegion(op->dst);
  if (op->barrier.defined()) {
    VisitBuffer(op->barrier);
    VisitExpr(op->barrier_index);
  }
}
void IRVisitor::Visit(const WarpSpecializeNode* op) {
  VisitStmt(op->producer);
  VisitStmt(op->consumer);
}
void IRVisitor::Visit(const GemmNode* op) {
  VisitRegion(op->a);
  VisitRegion(op->b);
  VisitRegion(op->c);
}
void IRVisitor::Visit(const FillNode* op) {
  VisitRegion(op->dst);
  VisitExpr(op->value);
}
void IRVisitor::Visit(const ReduceNode* op) {
  VisitBuffer(op->src);
  VisitBuffer(op->dst);
}
void IRVisitor::Visit(const CumsumNode* op) {
  VisitBuffer(op->src);
  VisitBuffer(op->dst);
}
void IRVisitor::Visit(const AtomicNode* op) {
  VisitRegion(op->dst);
  if (op->src) VisitRegion(*op->src);
  VisitExpr(op->value);
  if (op->prev) VisitRegion(*op->prev);
}
void IRVisitor::Visit(const MbarrierInitNode* op) {
  VisitBuffer(op->barriers);
  for (const Expr& e : op->arrive_counts) VisitExpr(e);
}
void IRVisitor::Visit(const MbarrierArriveNode* op) {
  VisitBuffer(op->barriers);
  VisitExpr(op->index);
}
void IRVisitor::Visit(const MbarrierExpectTxNode* op) {
  VisitBuffer(op->barriers);
  VisitExpr(op->index);
  VisitExpr(op->bytes);
}
void IRVisitor::Visit(const MbarrierWaitParityNode* op) {
  VisitBuffer(op->barriers);
  VisitExpr(op->index);
  VisitExpr(op->parity);
}
void IRVisitor::Visit(const AnnotateLayoutNode* op) { VisitBuffer(op->buffer); }
void IRVisitor::Visit(const PrintNode* op) {
  VisitExpr(op->value);
  if (op->buffer.defined()) VisitBuffer(op->buffer);
}
void IRVisitor::Visit(const EvaluateNode* op) { VisitExpr(op->value); }

// ---------------------------------------------------------------- IRMutator

Expr IRMutator::MutateExpr(const Expr& e) {
  if (!e.defined()) return e;
  return DispatchExpr(e, [this](const auto* node) { return Visit(node); });
}

Stmt IRMutator::MutateStmt(const Stmt& s) {
  if (!s.defined()) return s;
  return DispatchStmt(s, [this](const auto* node) { return Visit(node); });
}

std::vector<Expr> IRMutator::MutateExprs(const std::vector<Expr>& v,
                                         bool* changed) {
  std::vector<Expr> out;
  out.reserve(v.size());
  for (const Expr& e : v) {
    out.push_back(MutateExpr(e));
    if (!out.back().same_as(e)) *changed = true;
  }
  return out;
}

Region IRMutator::MutateRegion(const Region& r) {
  bool changed = false;
  Region out{MutateBuffer(r.buffer), MutateExprs(r.start, &changed),
             MutateExprs(r.extent, &changed)};
  return changed || !out.buffer.same_as(r.buffer) ? out : r;
}

Expr IRMutator::Visit(const IntImmNode* op) { return Self(op); }
Expr IRMutator::Visit(const FloatImmNode* op) { return Self(op); }
Expr IRMutator::Visit(const VarNode* op) { return Self(op); }

Expr IRMutator::Visit(const BinaryNode* op) {
  Expr a = MutateExpr(op->a), b = MutateExpr(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return Self(op);
  return Binary(op->op, a, b);
}
Expr IRMutator::Visit(const UnaryNode* op) {
  Expr a = MutateExpr(op->a);
  if (a.same_as(op->a)) return Self(op);
  return Unary(op->op, a);
}
Expr IRMutator::Visit(const SelectNode* op) {
  Expr c = MutateExpr(op->cond), t = MutateExpr(op->true_value),
       f = MutateExpr(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) &&
      f.same_as(op->false_value)) {
    return Self(op);
  }
  return Select(c, t, f);
}
Expr IRMutator::Visit(const CastNode* op) {
  Expr v = MutateExpr(op->value);
  if (v.same_as(op->value)) return Self(op);
  return Cast(op->dtype, v);
}
Expr IRMutator::Visit(const MathNode* op) {
  Expr a = MutateExpr(op->a);
  if (a.same_as(op->a)) return Self(op);
  return Math(op->op, a);
}
Expr IRMutator::Visit(const CallNode* op) {
  bool changed = false;
  std::vector<Expr> args = MutateExprs(op->args, &changed);
  if (!changed) return Self(op);
  return Call(op->dtype, op->name, std::move(args));
}
Expr IRMutator::Visit(const LoadNode* op) {
  bool changed = false;
  Buffer b = MutateBuffer(op->buffer);
  std::vector<Expr> idx = MutateExprs(op->indices, &changed);
  if (!changed && b.same_as(op->buffer)) return Self(op);
  return Load(b, std::move(idx));
}

Stmt IRMutator::Visit(const KernelNode* op) {
  bool changed = false;
  std::vector<Expr> grid = MutateExprs(op->grid, &changed);
  Stmt body = MutateStmt(op->body);
  if (!changed && body.same_as(op->body)) return Self(op);
  return MakeStmt<KernelNode>(std::move(grid), op->threads, op->block_vars,
                              body, op->loc);
}
Stmt IRMutator::Visit(const ForNode* op) {
  Expr min = MutateExpr(op->min), extent = MutateExpr(op->extent);
  Stmt body = MutateStmt(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) &&
      body.same_as(op->body)) {
    return Self(op);
  }
  return MakeStmt<ForNode>(op->var, min, extent, op->for_kind, op->num_stages,
                           op->order, op->stage, body, op->loc);
}
Stmt IRMutator::Visit(const IfThenElseNode* op) {
  Expr c = MutateExpr(op->cond);
  Stmt t = MutateStmt(op->then_case), e = MutateStmt(op->else_case);
  if (c.same_as(op->cond) && t.same_as(op->then_case) &&
      e.same_as(op->else_case)) {
    return Self(op);
  }
  return MakeStmt<IfThenElseNode>(c, t, e, op->loc);
}
Stmt IRMutator::Visit(const StoreNode* op) {
  bool changed = false;
  Buffer b = MutateBuffer(op->buffer);
  std::vector<Expr> idx = MutateExprs(op->indices, &changed);
  Expr v = MutateExpr(op->value);
  if (!changed && b.same_as(op->buffer) && v.same_as(op->value))
    return Self(op);
  return MakeStmt<StoreNode>(b, std::move(idx), v, op->loc);
}
Stmt IRMutator::Visit(const SeqNode* op) {
  bool changed = false;
  std::vector<Stmt> out;
  out.reserve(op->stmts.size());
  for (const Stmt& s : op->stmts) {
    out.push_back(MutateStmt(s));
    if (!out.back().same_as(s)) changed = true;
  }
  if (!changed) return Self(op);
  return Seq(std::move(out), op->loc);
}
Stmt IRMutator::Visit(const AllocateNode* op) {
  Buffer b = MutateBuffer(op->buffer);
  Stmt body = MutateStmt(op->body);
  if (b.same_as(op->buffer) && body.same_as(op->body)) return Self(op);
  return MakeStmt<AllocateNode>(b, body, op->loc);
}
Stmt IRMutator::Visit(const CopyNode* op) {
  Region src = MutateRegion(op->src), dst = MutateRegion(op->dst);
  if (!op->barrier.defined()) {
    if (SameRegion(src, op->src) && SameRegion(dst, op->dst)) return Self(op);
    return MakeStmt<CopyNode>(src, dst, op->loc);
  }
  Buffer bar = MutateBuffer(op->barrier);
  Expr index = MutateExpr(op->barrier_index);
  if (SameRegion(src, op->src) && SameRegion(dst, op->dst) &&
      bar.same_as(op->barrier) && index.same_as(op->barrier_index)) {
    return Self(op);
  }
  return MakeStmt<CopyNode>(src, dst, bar, index, op->loc);
}
Stmt IRMutator::Visit(const WarpSpecializeNode* op) {
  Stmt producer = MutateStmt(op->producer);
  Stmt consumer = MutateStmt(op->consumer);
  if (producer.same_as(op->producer) && consumer.same_as(op->consumer))
    return Self(op);
  return MakeStmt<WarpSpecializeNode>(op->producer_threads, producer, consumer,
                                      op->loc, op->consumer_groups, op->group);
}
Stmt IRMutator::Visit(const GemmNode* op) {
  Region a = MutateRegion(op->a), b = MutateRegion(op->b),
         c = MutateRegion(op->c);
  if (SameRegion(a, op->a) && SameRegion(b, op->b) && SameRegion(c, op->c))
    return Self(op);
  return MakeStmt<GemmNode>(a, b, c, op->transpose_a, op->transpose_b,
                            op->clear_accum, op->policy, op->loc);
}
Stmt IRMutator::Visit(const FillNode* op) {
  Region dst = MutateRegion(op->dst);
  Expr v = MutateExpr(op->value);
  if (SameRegion(dst, op->dst) && v.same_as(op->value)) return Self(op);
  return MakeStmt<FillNode>(dst, v, op->loc);
}
Stmt IRMutator::Visit(const ReduceNode* op) {
  Buffer src = MutateBuffer(op->src), dst = MutateBuffer(op->dst);
  if (src.same_as(op->src) && dst.same_as(op->dst)) return Self(op);
  return MakeStmt<ReduceNode>(src, dst, op->reduce_kind, op->dim, op->clear,
                              op->loc);
}
Stmt IRMutator::Visit(const CumsumNode* op) {
  Buffer src = MutateBuffer(op->src), dst = MutateBuffer(op->dst);
  if (src.same_as(op->src) && dst.same_as(op->dst)) return Self(op);
  return MakeStmt<CumsumNode>(src, dst, op->dim, op->reverse, op->loc);
}
Stmt IRMutator::Visit(const AtomicNode* op) {
  Region dst = MutateRegion(op->dst);
  std::optional<Region> src;
  if (op->src) src = MutateRegion(*op->src);
  Expr v = MutateExpr(op->value);
  std::optional<Region> prev;
  if (op->prev) prev = MutateRegion(*op->prev);
  if (SameRegion(dst, op->dst) && (!src || SameRegion(*src, *op->src)) &&
      v.same_as(op->value) && (!prev || SameRegion(*prev, *op->prev))) {
    return Self(op);
  }
  return MakeStmt<AtomicNode>(op->op, dst, src, v, prev, op->loc);
}
Stmt IRMutator::Visit(const SyncThreadsNode* op) { return Self(op); }
Stmt IRMutator::Visit(const MbarrierInitNode* op) {
  bool changed = false;
  Buffer b = MutateBuffer(op->barriers);
  std::vector<Expr> counts = MutateExprs(op->arrive_counts, &changed);
  if (!changed && b.same_as(op->barriers)) return Self(op);
  return MakeStmt<MbarrierInitNode>(b, std::move(counts), op->loc);
}
Stmt IRMutator::Visit(const MbarrierArriveNode* op) {
  Buffer b = MutateBuffer(op->barriers);
  Expr i = MutateExpr(op->index);
  if (b.same_as(op->barriers) && i.same_as(op->index)) return Self(op);
  return MakeStmt<MbarrierArriveNode>(b, i, op->loc);
}
Stmt IRMutator::Visit(const MbarrierExpectTxNode* op) {
  Buffer b = MutateBuffer(op->barriers);
  Expr i = MutateExpr(op->index), n = MutateExpr(op->bytes);
  if (b.same_as(op->barriers) && i.same_as(op->index) && n.same_as(op->bytes)) {
    return Self(op);
  }
  return MakeStmt<MbarrierExpectTxNode>(b, i, n, op->loc);
}
Stmt IRMutator::Visit(const MbarrierWaitParityNode* op) {
  Buffer b = MutateBuffer(op->barriers);
  Expr i = MutateExpr(op->index), p = MutateExpr(op->parity);
  if (b.same_as(op->barriers) && i.same_as(op->index) &&
      p.same_as(op->parity)) {
    return Self(op);
  }
  return MakeStmt<MbarrierWaitParityNode>(b, i, p, op->loc);
}
Stmt IRMutator::Visit(const AnnotateLayoutNode* op) {
  Buffer b = MutateBuffer(op->buffer);
  if (b.same_as(op->buffer)) return Self(op);
  return MakeStmt<AnnotateLayoutNode>(b, op->layout, op->loc);
}
Stmt IRMutator::Visit(const UseSwizzleNode* op) { return Self(op); }
Stmt IRMutator::Visit(const PrintNode* op) {
  Expr v = MutateExpr(op->value);
  Buffer b = op->buffer.defined() ? MutateBuffer(op->buffer) : op->buffer;
  if (v.same_as(op->value) && b.same_as(op->buffer)) return Self(op);
  return MakeStmt<PrintNode>(op->message, v, b, op->loc);
}
Stmt IRMutator::Visit(const EvaluateNode* op) {
  Expr v = MutateExpr(op->value);
  if (v.same_as(op->value)) return Self(op);
  return MakeStmt<EvaluateNode>(v, op->loc);
}

}  // namespace tessel::ir
