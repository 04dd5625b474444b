// Warpgroup ping-pong in a warp-specialized consumer loop that computes
// between its gemms (flash attention's softmax): the two consumer
// warpgroups take turns issuing their gemms, so that one runs its softmax
// while the tensor cores run the other's gemm. Left alone, both reach
// their gemms together, then their softmax together, and the tensor cores
// idle through it.
//
// clang-format off
//   for k:                         if wg == 1: bar.arrive 2          # wg 0 first
//     wait_parity(full[s(k)])      for k:
//     gemm(Q, K[s], S)       =>      wait_parity(full[s(k)])
//     softmax(S) -> P                bar.sync 2 + wg; issue S = Q K^T; bar.arrive 3 - wg
//     gemm(P, V[s], O)               softmax(S) -> P
//     arrive(empty[s(k)])            bar.sync 2 + wg; issue O += P V; bar.arrive 3 - wg
//                                    arrive(empty[s(k)])
//                                  if wg == 0: bar.sync 2           # wg 1's last turn
// clang-format on
//
// Named barriers 2 and 3 count both warpgroups (256): one syncs, the other
// arrives, so each turn passes exactly once. Off with
// PassConfig::disable_pingpong.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {
namespace {

constexpr int kTurnBarrier = 2;  // 0: __syncthreads, 1: the consumers'
constexpr int kBothWarpgroups = 256;

}  // namespace

// The consumer loop of a two-warpgroup warp-specialized block whose body
// runs wgmma gemms at its top level and more than gemms, with no barrier
// inside (a barrier of both warpgroups would wait on a turn).
bool Lowerer::TakesTurns(const ir::ForNode& loop) {
  if (st_.producer_threads == 0 || st_.threads != kBothWarpgroups ||
      st_.config.disable_pingpong) {
    return false;
  }
  const auto* seq = loop.body.As<ir::SeqNode>();
  if (seq == nullptr) return false;
  const auto* wait = seq->stmts.front().As<ir::MbarrierWaitParityNode>();
  if (wait == nullptr || !st_.tma_barriers.count(wait->barriers.get()))
    return false;
  int gemms = 0, others = 0;
  for (const Stmt& s : seq->stmts) {
    if (const auto* g = s.As<ir::GemmNode>()) {
      if (PlanOf(*g).instruction != GemmInstruction::kWgmma) return false;
      ++gemms;
    } else {
      ++others;
    }
  }
  bool barrier = false;
  ForEachStmt(loop.body, [&](const Stmt& s) {
    barrier |= s->kind == ir::StmtKind::kSyncThreads;
  });
  // Besides the gemms: the wait, the release and at least one computation.
  return gemms > 0 && others > 2 && !barrier;
}

Expr Lowerer::Warpgroup() const { return Expr(tx_) / 128; }

Stmt Lowerer::AwaitTurn() {
  return Intrin(Intrinsic::kNamedBarrierSync,
                {Expr(kTurnBarrier) + Warpgroup(), Expr(kBothWarpgroups)});
}

Stmt Lowerer::PassTurn() {
  return Intrin(Intrinsic::kNamedBarrierArrive,
                {Expr(kTurnBarrier + 1) - Warpgroup(), Expr(kBothWarpgroups)});
}

Stmt Lowerer::TakingTurns(Stmt loop) {
  Stmt first = MakeIf(Warpgroup() == 1,
                      Intrin(Intrinsic::kNamedBarrierArrive,
                             {Expr(kTurnBarrier), Expr(kBothWarpgroups)}));
  Stmt last = MakeIf(Warpgroup() == 0,
                     Intrin(Intrinsic::kNamedBarrierSync,
                            {Expr(kTurnBarrier), Expr(kBothWarpgroups)}));
  return ir::Seq({first, std::move(loop), last});
}

}  // namespace tessel::passes::lower
