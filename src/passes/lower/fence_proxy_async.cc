#include "src/passes/lower/fence_proxy_async.h"

#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

using ir::Stmt;

bool ReadsSharedThroughAsyncProxy(const Stmt& body) {
  bool found = false;
  ForEachStmt(body, [&](const Stmt& s) {
    found = found || HasEffect(s, kAsyncProxyReadsShared);
  });
  return found;
}

// Before every barrier (a named one too) and mbarrier arrival, except arrivals
// on the warp-specialized pipeline's own barriers: the producer's follow only
// its TMA issues, and a consumer's release a stage it read, never wrote (as
// CUTLASS's TMA pipelines release).
// With bulk reductions (atomic.cc), the same places first wait for their
// reads of shared memory: whoever the barrier lets write the tile next is
// ordered after them (the pipeline's arrivals order only TMA writes, which
// never land in a bulk reduction's tile).
struct Fence : ir::IRMutator {
  Fence(const LoweringState& state, bool bulk) : state(state), bulk(bulk) {}
  Stmt Visit(const ir::SyncThreadsNode* op) override {
    return Before(Self(op));
  }
  Stmt Visit(const ir::EvaluateNode* op) override {
    // The consumers' barrier in a warp-specialized block (not one that
    // orders issue only: the gemm turns').
    if (const ir::CallNode* bar =
            AsIntrin(Self(op), Intrinsic::kNamedBarrierSync)) {
      if (bar->args.size() == 3) return Self(op);
      return Before(Self(op));
    }
    const ir::CallNode* arrive = AsIntrin(Self(op), Intrinsic::kMbarrierArrive);
    if (arrive == nullptr) return Self(op);
    const auto* bar = arrive->args[0].As<ir::LoadNode>();
    if (bar && state.tma_barriers.count(bar->buffer.get())) return Self(op);
    return Before(Self(op));
  }
  Stmt Before(const Stmt& s) const {
    std::vector<Stmt> seq;
    if (bulk) seq.push_back(Intrin(Intrinsic::kBulkWaitRead, {ir::Expr(0)}));
    seq.push_back(Intrin(Intrinsic::kFenceProxyAsync, {}));
    seq.push_back(s);
    return ir::Seq(seq);
  }
  const LoweringState& state;
  const bool bulk;
};

}  // namespace

absl::Status FenceAsyncProxy(LoweringState& state) {
  if (!ReadsSharedThroughAsyncProxy(state.program.body))
    return absl::OkStatus();
  bool bulk = false;
  ForEachStmt(state.program.body, [&](const Stmt& s) {
    bulk = bulk || AsIntrin(s, Intrinsic::kBulkReduceAdd) != nullptr;
  });
  Fence fence(state, bulk);
  state.program.body = fence.MutateStmt(state.program.body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
