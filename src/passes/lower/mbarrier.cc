// mbarrier init (by thread 0, fenced), arrive and parity wait.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::Visit(const ir::MbarrierInitNode* op) {
  std::vector<Stmt> init;
  for (size_t i = 0; i < op->arrive_counts.size(); ++i) {
    init.push_back(Intrin(Intrinsic::kMbarrierInit,
                          {ir::Load(op->barriers, {Expr(int(i))}),
                           MutateExpr(op->arrive_counts[i])}));
  }
  init.push_back(Intrin(Intrinsic::kFenceBarrierInit, {}));
  return MakeIf(Expr(tx_) == 0, ir::Seq(init));
}

Stmt Lowerer::Visit(const ir::MbarrierArriveNode* op) {
  if (arrived_early_.count(op)) return ir::Seq({});  // wgmma_pipeline.cc
  // A cluster pair's stage release (warp_specialize.h).
  if (op->barriers.get() == st_.cluster_empty) {
    return Intrin(Intrinsic::kMbarrierArrivePair,
                  {ir::Load(op->barriers, {MutateExpr(op->index)})});
  }
  return Intrin(Intrinsic::kMbarrierArrive,
                {ir::Load(op->barriers, {MutateExpr(op->index)})});
}

Stmt Lowerer::Visit(const ir::MbarrierWaitParityNode* op) {
  return Intrin(Intrinsic::kMbarrierWaitParity,
                {ir::Load(op->barriers, {MutateExpr(op->index)}),
                 MutateExpr(op->parity)});
}

// The transaction bytes of TMA copies: only warp_specialize makes those
// (a user's expect_tx would wait for bytes no copy of theirs delivers).
Stmt Lowerer::Visit(const ir::MbarrierExpectTxNode* op) {
  if (st_.producer_threads == 0) {
    Fail(op,
         "mbarrier_expect_tx: only the scheduler's TMA copies deliver "
         "transaction bytes (warp specialization of a Pipelined loop); no "
         "copy of the program would complete this barrier");
    return Self(op);
  }
  return Intrin(
      Intrinsic::kMbarrierExpectTx,
      {ir::Load(op->barriers, {MutateExpr(op->index)}), MutateExpr(op->bytes)});
}

}  // namespace tessel::passes::lower
