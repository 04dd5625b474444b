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
struct Fence : ir::IRMutator {
  explicit Fence(const LoweringState& state) : state(state) {}
  Stmt Visit(const ir::SyncThreadsNode* op) override {
    return ir::Seq({Intrin(Intrinsic::kFenceProxyAsync, {}), Self(op)});
  }
  Stmt Visit(const ir::EvaluateNode* op) override {
    // The consumers' barrier in a warp-specialized block (not one that
    // orders issue only: the gemm turns').
    if (const ir::CallNode* bar =
            AsIntrin(Self(op), Intrinsic::kNamedBarrierSync)) {
      if (bar->args.size() == 3) return Self(op);
      return ir::Seq({Intrin(Intrinsic::kFenceProxyAsync, {}), Self(op)});
    }
    const ir::CallNode* arrive = AsIntrin(Self(op), Intrinsic::kMbarrierArrive);
    if (arrive == nullptr) return Self(op);
    const auto* bar = arrive->args[0].As<ir::LoadNode>();
    if (bar && state.tma_barriers.count(bar->buffer.get())) return Self(op);
    return ir::Seq({Intrin(Intrinsic::kFenceProxyAsync, {}), Self(op)});
  }
  const LoweringState& state;
};

}  // namespace

absl::Status FenceAsyncProxy(LoweringState& state) {
  if (!ReadsSharedThroughAsyncProxy(state.program.body))
    return absl::OkStatus();
  Fence fence(state);
  state.program.body = fence.MutateStmt(state.program.body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
