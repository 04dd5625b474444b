// The body of a consumer loop scheduled by order / stage lists
// (pipeline_schedule.h): every wgmma gemm of the list (A from shared memory
// or from registers) is committed as its own group and left in flight; a
// statement waits only for the groups it needs, the oldest first:
//
// clang-format off
//   init(acc_s)                      init(acc_s)
//   gemm(Q, K[k], acc_s)             issue + commit         # group 1
//   gemm(P, V[k-1], acc_o)     =>    issue + commit         # group 2
//   reduce_max(acc_s, m)             wgmma_wait<1>          # group 1 retired
//   ...                              reduce_max(acc_s, m)  ... (P V still runs)
//   acc_o *= scale                   wgmma_wait<0>; acc_o *= scale
// clang-format on
//
// A group retires before a statement that names its accumulator or its
// register A operand, that writes into a shared operand (anything but a
// gemm naming it), or that synchronizes (barriers, mbarrier arrivals: a
// stage released must be read to the end; with
// PassConfig::wgmma_across_barriers not a barrier when only the TMA writes
// its shared operands). The list ends with nothing in
// flight, so the loop's back edge and the code after it see finished
// accumulators.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {
namespace {

bool Synchronizes(const Stmt& s) {
  bool found = false;
  ForEachStmt(s, [&](const Stmt& n) {
    switch (n->kind) {
      case ir::StmtKind::kSyncThreads:
      case ir::StmtKind::kMbarrierArrive:
      case ir::StmtKind::kMbarrierExpectTx:
      case ir::StmtKind::kMbarrierInit:
      case ir::StmtKind::kEvaluate:
      case ir::StmtKind::kAtomic:
      case ir::StmtKind::kPrint:
      case ir::StmtKind::kWarpSpecialize:
        found = true;
        break;
      default:
        break;
    }
  });
  return found;
}

// Whether the kernel writes shared tile b through TMA copies only (a
// pipeline's staged tiles): those land after the consumers' mbarrier
// arrivals, which retire every group, so a barrier need not.
bool OnlyTmaWritten(const Stmt& body, const ir::BufferNode* b) {
  bool only = true;
  ForEachStmt(body, [&](const Stmt& s) {
    switch (s->kind) {
      case ir::StmtKind::kKernel:
      case ir::StmtKind::kFor:
      case ir::StmtKind::kIfThenElse:
      case ir::StmtKind::kSeq:
      case ir::StmtKind::kAllocate:
      case ir::StmtKind::kWarpSpecialize:
        return;  // their statements are visited one by one
      case ir::StmtKind::kCopy: {
        const auto* c = s.As<ir::CopyNode>();
        if (c->dst.buffer.get() == b && !c->barrier.defined()) only = false;
        return;
      }
      case ir::StmtKind::kGemm:
        if (s.As<ir::GemmNode>()->c.buffer.get() == b) only = false;
        return;
      default:
        if (UsesBuffer(s, b)) only = false;
    }
  });
  return only;
}

// Whether statement s must wait for gemm g's group to retire; across
// barriers: PassConfig::wgmma_across_barriers.
bool NeedsRetired(const ir::GemmNode& g, const Stmt& s, const Stmt& kernel,
                  bool across_barriers) {
  if (across_barriers && s->kind == ir::StmtKind::kSyncThreads) {
    // The barrier orders the group's reads before other threads' later
    // writes; only the TMA writes its shared operands (its register ones
    // and accumulator are this thread's).
    bool tma_only = true;
    for (const ir::Buffer& op : {g.a.buffer, g.b.buffer}) {
      if (op->scope == ir::Scope::kShared)
        tma_only = tma_only && OnlyTmaWritten(kernel, op.get());
    }
    if (tma_only) return false;
  }
  if (Synchronizes(s) || UsesBuffer(s, g.c.buffer.get())) return true;
  for (const ir::Buffer& op : {g.a.buffer, g.b.buffer}) {
    if (op->scope == ir::Scope::kShared) {
      if (s.As<ir::GemmNode>() == nullptr && UsesBuffer(s, op.get()))
        return true;
    } else if (UsesBuffer(s, op.get())) {
      return true;
    }
  }
  return false;
}

}  // namespace

Stmt Lowerer::LowerOverlappedWgmma(const ir::SeqNode* op) {
  std::vector<ir::Buffer> kept = PlanKeptOperands(op->stmts);
  std::vector<ir::Buffer> outer;
  std::swap(outer, deferred_wgmma_);
  std::vector<const ir::GemmNode*> groups;  // committed, oldest first
  auto retire = [&](size_t count, std::vector<Stmt>& out) {
    std::vector<ir::Buffer> accumulators;
    for (size_t i = 0; i < count; ++i)
      accumulators.push_back(groups[i]->c.buffer);
    out.push_back(
        WaitWgmma(accumulators, static_cast<int>(groups.size() - count)));
    groups.erase(groups.begin(), groups.begin() + count);
  };
  std::vector<Stmt> out;
  for (const Stmt& s : op->stmts) {
    size_t needed = 0;
    for (size_t i = 0; i < groups.size(); ++i)
      if (NeedsRetired(*groups[i], s, st_.program.body,
                       st_.config.wgmma_across_barriers))
        needed = i + 1;
    if (needed > 0) retire(needed, out);
    const auto* g = s.As<ir::GemmNode>();
    defer_wgmma_ = g != nullptr;
    overlap_wgmma_ = g != nullptr;
    out.push_back(MutateStmt(s));
    defer_wgmma_ = overlap_wgmma_ = false;
    if (!deferred_wgmma_.empty()) {
      groups.push_back(g);
      deferred_wgmma_.clear();
    }
  }
  if (!groups.empty()) retire(groups.size(), out);
  deferred_wgmma_ = std::move(outer);
  return AllocateKeptOperands(op, out, kept);
}

}  // namespace tessel::passes::lower
