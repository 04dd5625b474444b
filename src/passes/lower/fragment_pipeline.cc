// A pipelined k loop whose only consumer is one mma.sync gemm: its fragments
// double-buffered across k-tiles as well as within one.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

std::optional<PipelinedGemm> Lowerer::MatchPipelinedGemm(const Stmt& body) {
  const auto* seq = body.As<ir::SeqNode>();
  if (seq == nullptr) return std::nullopt;
  const std::vector<Stmt>& s = seq->stmts;
  PipelinedGemm p;
  size_t i = 0;
  if (i < s.size() && AsIntrin(s[i], Intrinsic::kCpAsyncWait)) p.wait = s[i++];
  if (i < s.size() && s[i]->kind == ir::StmtKind::kSyncThreads) p.sync = s[i++];
  if (i < s.size() && s[i].As<ir::IfThenElseNode>() && OnlyProducerCopies(s[i]))
    p.prefetch = s[i++];
  if (i < s.size() && AsIntrin(s[i], Intrinsic::kCpAsyncCommit))
    p.commit = s[i++];
  if (i < s.size() && s[i].As<ir::GemmNode>()) p.gemm = s[i++];
  if (!p.wait.defined() || !p.prefetch.defined() || !p.commit.defined() ||
      !p.gemm.defined() || p.gemm.As<ir::GemmNode>()->clear_accum ||
      i != s.size()) {
    return std::nullopt;
  }
  return p;
}

// Fragment double buffering across k-tiles ("fragpipe", CUTLASS's
// multistage main loop): the fragments of the first k16 step of tile k+1
// load during the last step of tile k, so the tensor cores never wait for
// an ldmatrix at a tile boundary. The (wait, barrier) pair the passes put
// at the top of iteration k+1 moves to just before that load, i.e. before
// the last k16 step of iteration k (and once before the loop):
//   wait; sync; load(buf 0, tile min, step 0)
//   for k:
//     for kk (unrolled):
//       if kk == KK-1: wait; sync
//       load(buf (kk+1)%2, kk+1 < KK ? (tile k, step kk+1) : (tile k+1, 0))
//       if kk == 0: prefetch; commit
//       mma(buf kk%2)
// Legal because the body has no other shared-memory statement: every read
// still follows the wait and barrier that preceded it before, and precedes
// the next barrier (the prefetch's writes were proven disjoint from the
// gemm's reads of the same iteration, so their order may change). The
// wait still counts the same committed groups: the commit sits at kk == 0,
// before the wait at kk == KK-1 (KK >= 2). KK must be even so that tile
// k+1 finds its first fragments in buffer 0. The last iteration loads
// (and discards) fragments of the stage after the last tile: in bounds of
// shared memory and not in flight (no prefetch was issued past the end).
std::optional<Stmt> Lowerer::LowerPipelinedGemm(const ir::ForNode* op) {
  std::optional<PipelinedGemm> p = MatchPipelinedGemm(op->body);
  if (!p) return std::nullopt;
  const ir::GemmNode& g = *p->gemm.As<ir::GemmNode>();
  const GemmPlan& plan = PlanOf(g);
  if (plan.instruction != GemmInstruction::kMmaSync) return std::nullopt;
  if (plan.k_steps < 2 || plan.k_steps % 2 != 0) return std::nullopt;
  std::optional<MmaGemm> m = PlanMma(g);
  if (!m) return std::nullopt;
  // The same gemm at the first tile and at the next one.
  Stmt first = Substitute(p->gemm, {{op->var.get(), op->min}});
  Stmt next = Substitute(p->gemm, {{op->var.get(), Expr(op->var) + 1}});
  const ir::GemmNode& g_first = *first.As<ir::GemmNode>();
  const ir::GemmNode& g_next = *next.As<ir::GemmNode>();
  MarkAsync(p->prefetch);  // followed by the commit: cp.async
  auto wait_and_sync = [&](std::vector<Stmt>& to) {
    to.push_back(MutateStmt(p->wait));
    if (p->sync.defined()) to.push_back(p->sync);
  };
  std::vector<Stmt> out;
  wait_and_sync(out);
  out.push_back(LoadFragments(*m, g_first, Expr(0), 0));
  auto mn = ir::AsConstInt(op->min), ex = ir::AsConstInt(op->extent);
  if (mn && ex) ranges_[op->var.get()] = {*mn, *mn + *ex - 1};
  std::vector<Stmt> body;
  for (int kk = 0; kk < m->KK; ++kk) {
    bool last = kk == m->KK - 1;
    if (last) wait_and_sync(body);
    body.push_back(last ? LoadFragments(*m, g_next, Expr(0), 0)
                        : LoadFragments(*m, g, Expr((kk + 1) % 2), kk + 1));
    if (kk == 0) {
      body.push_back(MutateStmt(p->prefetch));
      body.push_back(MutateStmt(p->commit));
    }
    body.push_back(MmaStep(*m, Expr(kk % 2), kk));
  }
  out.push_back(ir::MakeStmt<ir::ForNode>(
      op->var, op->min, op->extent, ir::ForKind::kSerial, 0, std::vector<int>{},
      std::vector<int>{}, ir::Seq(body), op->loc));
  return WithFragments(*m, ir::Seq(out, op->loc));
}

}  // namespace tessel::passes::lower
