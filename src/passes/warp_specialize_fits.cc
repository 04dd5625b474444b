#include "src/passes/warp_specialize_fits.h"

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

using ir::Stmt;

std::string SwitchedOff(const LoweringState& state) {
  const PassConfig& c = state.config;
  if (c.disable_tma_lower) return "PassConfig::disable_tma_lower";
  if (c.disable_warp_specialized) return "PassConfig::disable_warp_specialized";
  if (c.disable_async_copy) return "PassConfig::disable_async_copy";
  if (state.threads != 128 && state.threads != 256 && state.threads != 384) {
    return absl::StrCat("the kernel has ", state.threads,
                        " threads; 128, 256 or 384 are specialized");
  }
  return "";
}

std::string KernelRefuses(const Stmt& body) {
  int pipelined = 0;
  bool own_sync = false;
  ForEachStmt(body, [&](const Stmt& s) {
    if (const auto* f = s.As<ir::ForNode>())
      pipelined += f->for_kind == ir::ForKind::kPipelined;
    switch (s->kind) {
      case ir::StmtKind::kSyncThreads:
      case ir::StmtKind::kMbarrierInit:
      case ir::StmtKind::kMbarrierArrive:
      case ir::StmtKind::kMbarrierExpectTx:
      case ir::StmtKind::kMbarrierWaitParity:
      case ir::StmtKind::kWarpSpecialize:
        own_sync = true;
        break;
      default:
        break;
    }
  });
  if (own_sync) return "the kernel places its own mbarriers or barriers";
  if (pipelined != 1) {
    return absl::StrCat("the kernel has ", pipelined,
                        " Pipelined loops; one is specialized");
  }
  return "";
}

bool HasPipelinedLoop(const Stmt& body) {
  bool found = false;
  ForEachStmt(body, [&](const Stmt& s) {
    const auto* f = s.As<ir::ForNode>();
    found |= f && f->for_kind == ir::ForKind::kPipelined && f->num_stages >= 2;
  });
  return found;
}

}  // namespace

std::optional<std::string> SpecializeRefusal(const LoweringState& state) {
  if (state.target.arch() != "sm_90a" || !HasPipelinedLoop(state.program.body))
    return std::nullopt;
  if (std::string why = SwitchedOff(state); !why.empty()) return why;
  return KernelRefuses(state.program.body);
}

}  // namespace tessel::passes
