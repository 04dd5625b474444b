// The tile-op lowering's driver: the structural nodes (kernel, lists,
// loops, branches, allocations, element accesses) here; every tile op goes
// to its family's file (lowerer.h lists them).
#include "src/passes/lower/lower_tile_ops.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes {
namespace lower {

Stmt Lowerer::MutateStmt(const Stmt& s) {
  if (s.defined() && WaitsForBulkReads(s)) {
    return ir::Seq(
        {Intrin(Intrinsic::kBulkWaitRead, {Expr(0)}), MutateTileStmt(s)});
  }
  return MutateTileStmt(s);
}

Stmt Lowerer::MutateTileStmt(const Stmt& s) {
  if (!s.defined() || s->loc.line() == 0) return IRMutator::MutateStmt(s);
  const ir::StmtNode* outer = user_stmt_;
  user_stmt_ = s.get();
  Stmt out = IRMutator::MutateStmt(s);
  user_stmt_ = outer;
  return out;
}

Stmt Lowerer::Visit(const ir::KernelNode* op) {
  for (size_t d = 0; d < op->block_vars.size(); ++d) {
    if (auto g = ir::AsConstInt(op->grid[d]))
      ranges_[op->block_vars[d].get()] = {0, *g - 1};
  }
  // A persistent kernel's per-tile block indices range as a grid's.
  for (const auto& [var, extent] : st_.tile_block_vars)
    ranges_[var.get()] = {0, extent - 1};
  for (size_t d = 0; d < op->block_vars.size(); ++d)
    loop_extents_[op->block_vars[d].get()] = {Expr(0), op->grid[d]};
  warpgroups_.clear();
  Stmt body = MutateStmt(op->body);
  // The thread index first: rasterize_blocks adds its block remap after it.
  std::vector<Stmt> top{Let(tx_, ThreadIdx())};
  for (Stmt& let : WarpgroupLet(tx_)) top.push_back(let);
  top.push_back(body);
  // Bulk reductions read shared memory until waited for: not past the end.
  if (bulk_sources_ && !bulk_sources_->empty())
    top.push_back(Intrin(Intrinsic::kBulkWaitRead, {Expr(0)}));
  return ir::MakeStmt<ir::KernelNode>(op->grid, op->threads, op->block_vars,
                                      ir::Seq(top), op->loc);
}

Stmt Lowerer::Visit(const ir::SeqNode* op) {
  if (turn_groups_ > 0 && TakesRotatedGemmTurns(op))
    return LowerRotatedGemmTurns(op);
  // Global -> shared copies followed by a commit become cp.async.
  std::vector<const ir::Stmt*> pending;
  for (const Stmt& s : op->stmts) {
    if (AsIntrin(s, Intrinsic::kCpAsyncCommit)) {
      for (const Stmt* p : pending) MarkAsync(*p);
      pending.clear();
    } else if (OnlyProducerCopies(s)) {
      pending.push_back(&s);
    } else {
      pending.clear();
    }
  }
  std::vector<ir::Buffer> kept = PlanKeptOperands(op->stmts);
  std::vector<Stmt> out;
  // Gemms on shared operands in a row run together on the tensor cores:
  // one wait before the first statement that is not one of them.
  std::vector<ir::Buffer> outer_deferred;
  std::swap(outer_deferred, deferred_wgmma_);
  for (const Stmt& s : op->stmts) {
    if (!deferred_wgmma_.empty() && EndsDeferredWgmma(s)) {
      // It issues while they run and waits for all of them.
      out.push_back(MutateStmt(s));
      out.push_back(WaitWgmma(deferred_wgmma_));
      deferred_wgmma_.clear();
      continue;
    }
    if (!deferred_wgmma_.empty() && !JoinsDeferredWgmma(s)) {
      out.push_back(WaitWgmma(deferred_wgmma_));
      deferred_wgmma_.clear();
    }
    defer_wgmma_ = s.As<ir::GemmNode>() != nullptr;
    out.push_back(MutateStmt(s));
    defer_wgmma_ = false;
  }
  if (!deferred_wgmma_.empty()) out.push_back(WaitWgmma(deferred_wgmma_));
  deferred_wgmma_ = std::move(outer_deferred);
  return AllocateKeptOperands(op, out, kept);
}

Stmt Lowerer::Visit(const ir::ForNode* op) {
  if (op->for_kind == ir::ForKind::kParallel) return LowerParallel(op);
  loop_extents_[op->var.get()] = {op->min, op->extent};
  if (std::optional<Stmt> s = LowerWgmmaConsumerLoop(op)) return *s;
  if (turn_groups_ > 0 && TakesGemmTurns(op)) return LowerGemmTurns(op);
  if (std::optional<Stmt> s = LowerPipelinedGemm(op)) return *s;
  auto mn = ir::AsConstInt(op->min), ex = ir::AsConstInt(op->extent);
  if (mn && ex) ranges_[op->var.get()] = {*mn, *mn + *ex - 1};
  const auto* seq = op->body.As<ir::SeqNode>();
  Stmt body = seq != nullptr && st_.wgmma_overlap_loops.count(op->var.get())
                  ? LowerOverlappedWgmma(seq)
                  : MutateStmt(op->body);
  ir::ForKind kind = op->for_kind == ir::ForKind::kPipelined
                         ? ir::ForKind::kSerial
                         : op->for_kind;
  return ir::MakeStmt<ir::ForNode>(op->var, op->min, op->extent, kind, 0,
                                   std::vector<int>{}, std::vector<int>{}, body,
                                   op->loc);
}

Stmt Lowerer::Visit(const ir::IfThenElseNode* op) {
  // `v + c1 < c2` bounds v inside the then branch (pipeline prefetch
  // guards), which removes copy predicates that cannot fail there.
  std::optional<std::pair<const ir::VarNode*, Range>> saved;
  if (const auto* lt = op->cond.As<ir::BinaryNode>();
      lt && lt->op == ir::BinaryOp::kLT) {
    const ir::VarNode* v = lt->a.As<ir::VarNode>();
    int64_t c1 = 0;
    if (const auto* add = lt->a.As<ir::BinaryNode>();
        add && add->op == ir::BinaryOp::kAdd && ir::AsConstInt(add->b)) {
      v = add->a.As<ir::VarNode>();
      c1 = *ir::AsConstInt(add->b);
    }
    auto c2 = ir::AsConstInt(lt->b);
    auto it = v ? ranges_.find(v) : ranges_.end();
    if (c2 && it != ranges_.end()) {
      saved = {v, it->second};
      it->second.hi = std::min(it->second.hi, *c2 - c1 - 1);
    }
  }
  const size_t facts = Assume(op->cond);
  Stmt then_case = MutateStmt(op->then_case);
  facts_.resize(facts);
  if (saved) ranges_[saved->first] = saved->second;
  Stmt else_case = MutateStmt(op->else_case);
  return ir::MakeStmt<ir::IfThenElseNode>(MutateExpr(op->cond), then_case,
                                          else_case, op->loc);
}

Stmt Lowerer::Visit(const ir::AllocateNode* op) {
  Stmt body = MutateStmt(op->body);
  if (op->buffer->scope == ir::Scope::kFragment) {
    return ir::MakeStmt<ir::AllocateNode>(Local(op->buffer), body, op->loc);
  }
  return ir::MakeStmt<ir::AllocateNode>(op->buffer, body, op->loc);
}

Stmt Lowerer::Visit(const ir::AnnotateLayoutNode* op) { return ir::Seq({}); }

Stmt Lowerer::Visit(const ir::StoreNode* op) {
  if (op->buffer->scope == ir::Scope::kFragment) {
    Fail(op, "an element store to fragment " + op->buffer->name +
                 " outside a T.Parallel loop; store fragment elements in a "
                 "T::Parallel loop, or keep " +
                 op->buffer->name + " in shared memory (T::alloc_shared)");
    return Self(op);
  }
  Stmt s = IRMutator::Visit(op);
  // T.Parallel bodies were guarded in their own variables.
  if (in_parallel_) return Flatten(s);
  return Guard(ElementInBounds(op->buffer, s.As<ir::StoreNode>()->indices),
               Flatten(s));
}

Expr Lowerer::Visit(const ir::LoadNode* op) {
  if (op->buffer->scope == ir::Scope::kFragment) {
    Fail(nullptr, "an element read of fragment " + op->buffer->name +
                      " outside a T.Parallel loop; read fragment elements in "
                      "a T::Parallel loop, or keep " +
                      op->buffer->name + " in shared memory (T::alloc_shared)");
    return Self(op);
  }
  Expr e = IRMutator::Visit(op);
  const auto* l = e.As<ir::LoadNode>();
  Expr in = in_parallel_ ? Expr() : ElementInBounds(l->buffer, l->indices);
  if (!in.defined()) return FlattenExpr(e);
  return ir::Select(in, FlattenExpr(e), ir::Zero(e.dtype()));
}

// `i < c` (or `i <= c`, `c > i`, `c >= i`) that the variable ranges decide
// true, as the copies' bounds checks are decided (InBounds): a mask of the
// columns past N costs nothing where a tile's columns cannot pass it.
Expr Lowerer::Visit(const ir::BinaryNode* op) {
  Expr e = IRMutator::Visit(op);
  const auto* b = e.As<ir::BinaryNode>();
  if (b == nullptr || !is_int(b->a.dtype())) return e;
  auto below = [&](const Expr& i, const Expr& c, int64_t slack) {
    auto limit = ir::AsConstInt(c);
    auto up = limit ? Upper(i) : std::nullopt;
    return up && *up + slack <= *limit;
  };
  switch (b->op) {
    case ir::BinaryOp::kLT:
      if (below(b->a, b->b, 1)) return ir::BoolImm(true);
      break;
    case ir::BinaryOp::kLE:
      if (below(b->a, b->b, 0)) return ir::BoolImm(true);
      break;
    case ir::BinaryOp::kGT:
      if (below(b->b, b->a, 1)) return ir::BoolImm(true);
      break;
    case ir::BinaryOp::kGE:
      if (below(b->b, b->a, 0)) return ir::BoolImm(true);
      break;
    default:
      break;
  }
  return e;
}

}  // namespace lower

absl::Status LowerTileOps(LoweringState& state) {
  lower::Lowerer l(state);
  ir::Stmt body = l.MutateStmt(state.program.body);
  if (!l.status.ok()) return l.status;
  state.program.body = body;
  return absl::OkStatus();
}

}  // namespace tessel::passes
