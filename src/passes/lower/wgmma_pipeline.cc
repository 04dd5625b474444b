// The consumer loop warp_specialize makes around wgmma gemms, with one
// wgmma group kept in flight across iterations: the gemms of iteration k
// are issued before those of k - 1 retire, and the stage k - 1 read is
// released only then.
//
// clang-format off
//   for k:                                for k:
//     wait_parity(full[s(k)], ph(k))        wait_parity(full[s(k)], ph(k))
//     gemm(As[s(k)], Bs[s(k)], C)    =>     issue + commit gemm(k)
//     arrive(empty[s(k)])                   wgmma_wait<1>   # k - 1 retired
//                                           if k > min: arrive(empty[s(k-1)])
//                                         [arrive(math_order[..])]
//                                         wgmma_wait<0>
//                                         arrive(empty[s(last)])
// clang-format on
//
// A ping-pong group's arrive on the other group's order barrier, which
// follows the loop, moves up before the wait<0>: the other group's first
// wgmma queues behind this group's last (as CUTLASS's ping-pong does).
//
// Legal because the gemms accumulate into registers no other statement of
// the loop touches (no clear_accum: a clear would race the wgmma still
// running on them), and each stage is released after the wait that
// retires the reads of it.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

std::optional<Stmt> Lowerer::LowerWgmmaConsumerLoop(const ir::ForNode* op) {
  const auto* seq = op->body.As<ir::SeqNode>();
  if (seq == nullptr || seq->stmts.size() < 3) return std::nullopt;
  const std::vector<Stmt>& s = seq->stmts;
  // Only the scheduler's own ring: a program's barriers may need the
  // arrival in this iteration (a later wait may count on it).
  const auto* wait = s.front().As<ir::MbarrierWaitParityNode>();
  const auto* arrive = s.back().As<ir::MbarrierArriveNode>();
  if (wait == nullptr || arrive == nullptr ||
      !st_.tma_barriers.count(wait->barriers.get()) ||
      !st_.tma_barriers.count(arrive->barriers.get())) {
    return std::nullopt;
  }
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    const auto* g = s[i].As<ir::GemmNode>();
    if (g == nullptr || g->clear_accum) return std::nullopt;
    const GemmPlan& plan = PlanOf(*g);
    if (plan.instruction != GemmInstruction::kWgmma ||
        plan.a.path != OperandPath::kDescriptor) {
      return std::nullopt;
    }
  }
  auto mn = ir::AsConstInt(op->min), ex = ir::AsConstInt(op->extent);
  if (mn && ex) ranges_[op->var.get()] = {*mn, *mn + *ex - 1};
  std::vector<ir::Buffer> outer;
  std::swap(outer, deferred_wgmma_);
  std::vector<Stmt> body{MutateStmt(s.front())};
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    defer_wgmma_ = true;
    body.push_back(MutateStmt(s[i]));
    defer_wgmma_ = false;
  }
  std::vector<ir::Buffer> accumulators;
  std::swap(accumulators, deferred_wgmma_);
  deferred_wgmma_ = std::move(outer);
  // No operand fence after this wait: iteration k's group still writes the
  // accumulators and no statement of the loop reads them; the fence after
  // the wait<0> below orders their reads. The cubin is the same without it
  // and NVVM takes 13 % less time on a gemm (docs/benchmarks.md).
  body.push_back(Intrin(Intrinsic::kWgmmaWait, {Expr(1)}));
  const ir::Stmt& release = s.back();
  body.push_back(MakeIf(
      Expr(op->var) > op->min,
      MutateStmt(Substitute(release, {{op->var.get(), Expr(op->var) - 1}}))));
  std::vector<Stmt> out{ir::MakeStmt<ir::ForNode>(
      op->var, op->min, op->extent, ir::ForKind::kSerial, 0, std::vector<int>{},
      std::vector<int>{}, ir::Seq(body), op->loc)};
  if (auto it = arrive_after_issue_.find(op); it != arrive_after_issue_.end()) {
    out.push_back(MutateStmt(it->second));
    arrived_early_.insert(it->second.get());
  }
  out.push_back(WaitWgmma(accumulators));
  Stmt last = MutateStmt(
      Substitute(release, {{op->var.get(), op->min + op->extent - 1}}));
  out.push_back(ex && *ex > 0 ? last : MakeIf(op->extent > 0, last));
  return ir::Seq(out, op->loc);
}

}  // namespace tessel::passes::lower
