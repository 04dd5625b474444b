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

struct Fence : ir::IRMutator {
  Stmt Visit(const ir::SyncThreadsNode* op) override {
    return ir::Seq({Intrin(Intrinsic::kFenceProxyAsync, {}), Self(op)});
  }
  Stmt Visit(const ir::EvaluateNode* op) override {
    if (AsIntrin(Self(op), Intrinsic::kMbarrierArrive))
      return ir::Seq({Intrin(Intrinsic::kFenceProxyAsync, {}), Self(op)});
    return Self(op);
  }
};

}  // namespace

absl::Status FenceAsyncProxy(LoweringState& state) {
  if (!ReadsSharedThroughAsyncProxy(state.program.body))
    return absl::OkStatus();
  Fence fence;
  state.program.body = fence.MutateStmt(state.program.body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
