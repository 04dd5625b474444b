// Consumer warpgroups taking turns at the tensor cores in a loop that the
// Pipelined order / stage lists rotated (PassConfig::consumer_gemm_turns
// with FlashAttention-3's intra-warpgroup overlap: both of its "ping-pong"
// halves at once). The rotation (pipeline_schedule.h) issues P V of block
// k - 1 right after Q K^T of block k; with turns, warpgroup w's window is
// those two issues, so the other warpgroups' softmaxes run under its gemms
// and its own softmax under theirs:
//
// clang-format off
//   wait full[0]                        if (wg == 0) bar.arrive turn[0]
//   S = Q K^T [0]                       wait full[0]
//   softmax [0]                         bar.sync turn[wg]; S = Q K^T [0]
//   for k in 1..n-1:              =>    bar.arrive turn[wg + 1]
//     wait full[k]                      softmax [0]
//     S = Q K^T [k]                     for k in 1..n-1:
//     O += P V [k-1]                      wait full[k]
//     softmax [k]                         bar.sync turn[wg]; S = Q K^T [k]
//     arrive empty[k-1]                   O += P V [k-1]; bar.arrive turn[wg + 1]
//   O += P V [n-1]                        softmax [k] (waits S only)
//   arrive empty[n-1]                     arrive empty[k-1]
//                                       bar.sync turn[wg]; O += P V [n-1]
//                                       if (wg < last) bar.arrive turn[wg + 1]
//                                       arrive empty[n-1]
// clang-format on
//
// (turn[wg + 1] is modulo the warpgroups.) Each turn barrier counts 256
// threads, its warpgroup's sync and the previous warpgroup's arrive; each
// warpgroup syncs n + 1 times and passes n + 1 times but for the last one's
// final pass, which warpgroup 0's first arrive stands in for: every sync
// meets exactly one arrive and none is left half arrived. A warpgroup
// cannot pass twice before the next one syncs (it must get its own turn
// back in between), so no barrier counts arrivals of two turns.
//
// Applies to the rotated list of a warp-specialized consumer loop (the TMA
// ring's wait first in its body, its release last) of two or three
// consumer warpgroups whose wgmma gemms are statements of the list or of
// the loop's body, at least one before the loop, in it and after it, and
// adjacent where there are several (a window holds no barrier, which would
// wait for a warpgroup waiting for the turn). Elsewhere nothing changes.
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes::lower {
namespace {

// The indices of the gemm statements of a list, or nullopt where they are
// not one adjacent run.
std::optional<std::vector<size_t>> AdjacentGemms(
    const std::vector<Stmt>& stmts) {
  std::vector<size_t> at;
  for (size_t i = 0; i < stmts.size(); ++i)
    if (stmts[i].As<ir::GemmNode>() != nullptr) at.push_back(i);
  if (at.empty() || at.back() - at.front() + 1 != at.size()) {
    return std::nullopt;
  }
  return at;
}

// Where the one scheduled loop of a list is, or nullopt.
std::optional<size_t> ScheduledLoopAt(
    const ir::SeqNode* op,
    const std::unordered_set<const ir::VarNode*>& scheduled) {
  std::optional<size_t> at;
  for (size_t i = 0; i < op->stmts.size(); ++i) {
    const auto* f = op->stmts[i].As<ir::ForNode>();
    if (f == nullptr || !scheduled.count(f->var.get())) continue;
    if (at) return std::nullopt;
    at = i;
  }
  return at;
}

}  // namespace

bool Lowerer::TakesRotatedGemmTurns(const ir::SeqNode* op) {
  const std::optional<size_t> at = ScheduledLoopAt(op, st_.wgmma_overlap_loops);
  if (!at) return false;
  const size_t loop_at = *at;
  const auto* loop = op->stmts[loop_at].As<ir::ForNode>();
  const auto* body = loop->body.As<ir::SeqNode>();
  if (body == nullptr || body->stmts.size() < 3) return false;
  const auto* wait = body->stmts.front().As<ir::MbarrierWaitParityNode>();
  const auto* release = body->stmts.back().As<ir::MbarrierArriveNode>();
  if (wait == nullptr || release == nullptr ||
      !st_.tma_barriers.count(wait->barriers.get()) ||
      !st_.tma_barriers.count(release->barriers.get())) {
    return false;
  }
  const std::vector<Stmt> before(op->stmts.begin(),
                                 op->stmts.begin() + loop_at);
  const std::vector<Stmt> after(op->stmts.begin() + loop_at + 1,
                                op->stmts.end());
  size_t direct = 0;
  for (const std::vector<Stmt>* list : {&before, &body->stmts, &after}) {
    std::optional<std::vector<size_t>> at = AdjacentGemms(*list);
    if (!at) return false;
    for (size_t i : *at) {
      const auto* g = (*list)[i].As<ir::GemmNode>();
      if (PlanOf(*g).instruction != GemmInstruction::kWgmma) return false;
    }
    direct += at->size();
  }
  size_t nested = 0;
  ForEachStmt(ir::Seq(op->stmts), [&](const Stmt& x) {
    if (x.As<ir::GemmNode>() != nullptr) ++nested;
  });
  return nested == direct;
}

Stmt Lowerer::LowerRotatedGemmTurns(const ir::SeqNode* op) {
  const int groups = turn_groups_;
  const size_t loop_at = *ScheduledLoopAt(op, st_.wgmma_overlap_loops);
  const auto* loop = op->stmts[loop_at].As<ir::ForNode>();
  // Each list's run of gemms is one window: its first waits for the turn,
  // its last passes it on (the final one but for the last warpgroup).
  auto mark = [&](const std::vector<Stmt>& list, int close) {
    const std::vector<size_t> at = *AdjacentGemms(list);
    turn_marks_[list[at.front()].As<ir::GemmNode>()] |= kTurnSync;
    turn_marks_[list[at.back()].As<ir::GemmNode>()] |= close;
  };
  mark(std::vector<Stmt>(op->stmts.begin(), op->stmts.begin() + loop_at),
       kTurnPass);
  mark(loop->body.As<ir::SeqNode>()->stmts, kTurnPass);
  mark(std::vector<Stmt>(op->stmts.begin() + loop_at + 1, op->stmts.end()),
       kTurnPassUnlessLast);
  turn_groups_ = 0;  // the list itself, lowered as any other
  in_turns_ = groups;
  // The first turn is warpgroup 0's.
  Stmt first = MakeIf(Expr(tx_) / 128 == 0,
                      Intrin(Intrinsic::kNamedBarrierArrive,
                             {Expr(kFirstTurnBarrier), Expr(kTurnThreads)}));
  Stmt rest = Visit(op);
  turn_marks_.clear();
  in_turns_ = 0;
  turn_groups_ = groups;
  return ir::Seq({first, rest});
}

}  // namespace tessel::passes::lower
