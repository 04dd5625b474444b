// The warp-specialized block (warp_specialize.h): the producer warpgroup
// runs after the kernel's threads, gives registers back and lets one
// thread issue its copies; the consumers take the registers, and their
// barriers count them alone (named barrier 1: the producers never arrive).
// Ping-pong consumer groups each run the consumer code with their own
// thread index and barrier.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {
namespace {

// Register budgets of the two roles (setmaxnreg counts, multiples of 8)
// that fit the 64K registers of an SM: 128 producers x 40 + 256 consumers
// x 232, or 128 x 24 + 384 x 160 with three consumer warpgroups.
struct RegisterSplit {
  int producer, consumer;
};
RegisterSplit RegistersFor(int consumers) {
  if (consumers == 384) return {24, 160};
  return {40, 232};
}

// Named barrier 1 (+ the group of a ping-pong consumer): 0 is
// __syncthreads'.
struct ConsumerBarriers : ir::IRMutator {
  ConsumerBarriers(int threads, Expr id) : threads(threads), id(id) {}
  Stmt Visit(const ir::SyncThreadsNode*) override {
    return Intrin(Intrinsic::kNamedBarrierSync, {id, Expr(threads)});
  }
  int threads;
  Expr id;
};

}  // namespace

Stmt Lowerer::Visit(const ir::WarpSpecializeNode* op) {
  const int groups = op->consumer_groups;
  const int consumers = st_.threads * groups;
  Stmt producer = MutateStmt(op->producer);
  // A ping-pong group's code sees its own thread index, 0 .. threads - 1.
  const ir::Var block_tx = tx_;
  if (groups > 1) {
    tx_ = ir::Var("group_tx");
    ranges_[tx_.get()] = {0, st_.threads - 1};
    ranges_[op->group.get()] = {0, groups - 1};
    // The order barrier's arrive right after a consumer loop.
    ForEachStmt(op->consumer, [&](const Stmt& s) {
      const auto* seq = s.As<ir::SeqNode>();
      for (size_t i = 0; seq != nullptr && i + 1 < seq->stmts.size(); ++i) {
        const auto* loop = seq->stmts[i].As<ir::ForNode>();
        const auto* arrive = seq->stmts[i + 1].As<ir::MbarrierArriveNode>();
        if (loop != nullptr && arrive != nullptr &&
            st_.tma_barriers.count(arrive->barriers.get())) {
          arrive_after_issue_[loop] = seq->stmts[i + 1];
        }
      }
    });
  }
  // Two or three warpgroups of consumers may take turns at the gemms.
  const int saved_turns = turn_groups_;
  if (st_.config.consumer_gemm_turns && groups == 1 && st_.threads % 128 == 0 &&
      (st_.threads == 256 || st_.threads == 384)) {
    turn_groups_ = st_.threads / 128;
  }
  Stmt consumer = MutateStmt(op->consumer);
  turn_groups_ = saved_turns;
  const ir::Var group_tx = tx_;
  tx_ = block_tx;
  Expr barrier_id = groups > 1 ? Expr(1) + op->group : Expr(1);
  consumer = ConsumerBarriers(st_.threads, barrier_id).MutateStmt(consumer);
  if (groups > 1) {
    std::vector<Stmt> lets{Let(op->group, Expr(tx_) / st_.threads),
                           Let(group_tx, Expr(tx_) % st_.threads)};
    for (Stmt& let : WarpgroupLet(group_tx)) lets.push_back(let);
    lets.push_back(consumer);
    consumer = ir::Seq(lets);
  }
  std::vector<Stmt> p, c;
  // With one consumer warpgroup every role has registers to spare.
  if (consumers > 128) {
    const RegisterSplit r = RegistersFor(consumers);
    p.push_back(Intrin(Intrinsic::kSetMaxNReg, {Expr(0), Expr(r.producer)}));
    c.push_back(Intrin(Intrinsic::kSetMaxNReg, {Expr(1), Expr(r.consumer)}));
  }
  // The producer thread fetches its tensor maps' descriptors while the
  // consumers set up: the first loads of a short kernel wait less.
  std::vector<Stmt> issue;
  for (size_t m = 0; m < st_.tensor_maps.size(); ++m)
    issue.push_back(
        Intrin(Intrinsic::kTmaPrefetch, {Expr(static_cast<int>(m))}));
  issue.push_back(producer);
  p.push_back(MakeIf(Expr(tx_) == consumers, ir::Seq(issue)));
  c.push_back(consumer);
  // TMA-store epilogues: the last stores read their staging tiles before
  // the block's shared memory goes (each warpgroup's elected thread).
  if (tma_stores_) {
    c.push_back(MakeIf(Expr(tx_) % 128 == 0,
                       Intrin(Intrinsic::kTmaStoreWait, {Expr(0), Expr(0)})));
  }
  return MakeIf(Expr(tx_) >= consumers, ir::Seq(p), ir::Seq(c));
}

}  // namespace tessel::passes::lower
