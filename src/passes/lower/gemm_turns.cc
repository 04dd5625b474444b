// Consumer warpgroups taking turns at the tensor cores
// (PassConfig::consumer_gemm_turns; FlashAttention-3's "warp scheduler
// barrier"). Without turns, the consumer warpgroups of a flash forward wait
// on the same K / V stage and issue their Q K^T together, so their softmaxes
// run together too and the tensor cores idle meanwhile. With turns, warpgroup
// w's window is [P V of the previous block, Q K^T of this block]; it then
// passes the turn to w + 1, so one warpgroup's gemms run while the others'
// softmaxes do:
//
//   if (wg == 0) bar.arrive turn[0]      # the first turn is warpgroup 0's
//   bar.sync turn[wg]                    # ... for the first Q K^T
//   for k:
//     wait full[k]
//     S = Q K^T (issued); bar.arrive turn[wg + 1]; wait S
//     softmax
//     bar.sync turn[wg]; O += P V (waited)
//     arrive empty[k]
//   if (wg < last) bar.arrive turn[wg + 1]
//
// Each turn barrier counts 256 threads: its warpgroup's sync and the
// previous warpgroup's arrive; every sync meets exactly one arrive (n + 1 of
// each per barrier for n iterations, n = 0 too), so none is left half
// arrived at the block's end.
//
// Applies to the warp-specialized consumer loop (the TMA ring's wait first,
// its release last) of two or three consumer warpgroups (256 or 384 threads,
// no ping-pong groups) whose body holds exactly two gemms, both wgmma and
// statements of the loop's own list: first one on shared operands, then one
// with A in registers; not a loop the Pipelined order / stage lists
// overlap. Elsewhere the switch changes nothing.
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes::lower {

bool Lowerer::TakesGemmTurns(const ir::ForNode* op) {
  const auto* seq = op->body.As<ir::SeqNode>();
  if (seq == nullptr || seq->stmts.size() < 3 ||
      st_.wgmma_overlap_loops.count(op->var.get())) {
    return false;
  }
  const std::vector<Stmt>& s = seq->stmts;
  const auto* wait = s.front().As<ir::MbarrierWaitParityNode>();
  const auto* release = s.back().As<ir::MbarrierArriveNode>();
  if (wait == nullptr || release == nullptr ||
      !st_.tma_barriers.count(wait->barriers.get()) ||
      !st_.tma_barriers.count(release->barriers.get())) {
    return false;
  }
  int nested = 0;
  ForEachStmt(op->body, [&](const Stmt& x) {
    if (x.As<ir::GemmNode>() != nullptr) ++nested;
  });
  std::vector<OperandPath> a_paths;
  for (const Stmt& x : s) {
    const auto* g = x.As<ir::GemmNode>();
    if (g == nullptr) continue;
    const GemmPlan& plan = PlanOf(*g);
    if (plan.instruction != GemmInstruction::kWgmma) return false;
    a_paths.push_back(plan.a.path);
  }
  return nested == 2 && a_paths.size() == 2 &&
         a_paths[0] == OperandPath::kDescriptor &&
         a_paths[1] == OperandPath::kRegisters;
}

Stmt Lowerer::GemmTurnSync() {
  const Expr wg = Expr(tx_) / 128;
  // It orders the tensor cores' issue only: no proxy fence before it.
  return Intrin(Intrinsic::kNamedBarrierSync,
                {Expr(kFirstTurnBarrier) + wg, Expr(kTurnThreads), Expr(1)});
}

Stmt Lowerer::GemmTurnPass() {
  const Expr next = (Expr(tx_) / 128 + 1) % in_turns_;
  return Intrin(Intrinsic::kNamedBarrierArrive,
                {Expr(kFirstTurnBarrier) + next, Expr(kTurnThreads)});
}

Stmt Lowerer::LowerGemmTurns(const ir::ForNode* op) {
  const int groups = turn_groups_;
  const Expr wg = Expr(tx_) / 128;
  turn_groups_ = 0;  // the loop itself, lowered as any other
  in_turns_ = groups;
  // The gemm with A in registers waits for the turn, the one on shared
  // operands passes it on.
  for (const Stmt& s : op->body.As<ir::SeqNode>()->stmts) {
    if (const auto* g = s.As<ir::GemmNode>()) {
      turn_marks_[g] =
          PlanOf(*g).a.path == OperandPath::kRegisters ? kTurnSync : kTurnPass;
    }
  }
  std::vector<Stmt> out;
  out.push_back(
      MakeIf(wg == 0, Intrin(Intrinsic::kNamedBarrierArrive,
                             {Expr(kFirstTurnBarrier), Expr(kTurnThreads)})));
  out.push_back(GemmTurnSync());
  out.push_back(Visit(op));
  out.push_back(MakeIf(wg < groups - 1, GemmTurnPass()));
  turn_marks_.clear();
  in_turns_ = 0;
  turn_groups_ = groups;
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
