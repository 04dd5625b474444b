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
  return Intrin(Intrinsic::kMbarrierArrive,
                {ir::Load(op->barriers, {MutateExpr(op->index)})});
}

Stmt Lowerer::Visit(const ir::MbarrierWaitParityNode* op) {
  return Intrin(Intrinsic::kMbarrierWaitParity,
                {ir::Load(op->barriers, {MutateExpr(op->index)}),
                 MutateExpr(op->parity)});
}

Stmt Lowerer::Visit(const ir::MbarrierExpectTxNode* op) {
  Fail(op, "mbarrier_expect_tx needs the TMA path (not built yet)");
  return Self(op);
}

}  // namespace tessel::passes::lower
