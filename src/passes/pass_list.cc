#include "src/passes/pass_list.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/ir/printer.h"
#include "src/passes/inject_pipeline.h"
#include "src/passes/insert_barriers.h"
#include "src/passes/layout_inference.h"
#include "src/passes/lower/fence_proxy_async.h"
#include "src/passes/lower/lower_tile_ops.h"
#include "src/passes/lower/rasterize_blocks.h"
#include "src/passes/plan_gemms.h"
#include "src/passes/plan_shared_memory.h"
#include "src/passes/state_text.h"
#include "src/passes/warp_specialize.h"

namespace tessel::passes {
namespace {

struct Pass {
  const char* name;
  absl::Status (*run)(LoweringState&);
};

// The one list. Order matters: layouts decide swizzles and warp grids the
// software pipeliner (inject_pipeline) and lowering use; the pipeliner
// multiplies shared tiles before the plan sizes them; the barrier planner needs
// the plan's aliasing and still sees tile ops; the gemm plan (instruction, warp
// grid, operand paths) is made on the final operand regions, and the lowering
// then writes per-thread code (wgmma included) from it. The async-proxy fences
// follow it: they go before the barriers the planner placed, in kernels whose
// lowered code reads shared memory through the async proxy. The block
// rasterization comes last: it rebinds the block indices, whose grid ranges the
// lowering's bound analysis relies on.
constexpr Pass kPasses[] = {
    {"layout_inference", InferLayouts},
    {"warp_specialize", WarpSpecialize},
    {"inject_pipeline", InjectPipeline},
    {"plan_shared_memory", PlanSharedMemory},
    {"insert_barriers", InsertBarriers},
    {"plan_gemms", PlanGemms},
    {"lower_tile_ops", LowerTileOps},
    {"fence_proxy_async", FenceAsyncProxy},
    {"rasterize_blocks", RasterizeBlocks},
};

absl::Status Check(const LoweringState& state) {
  const ir::Stmt& body = state.program.body;
  if (!body.defined()) {
    return absl::InvalidArgumentError(
        absl::StrCat(state.program.name, ": empty program"));
  }
  return absl::OkStatus();
}

// Writes the IR after pass `index` under `dir`; `from` names the setting
// that asked for it, for the error when the folder cannot be written.
absl::Status Dump(const LoweringState& state, const std::string& dir,
                  const char* from, int index, const std::string& pass) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = absl::StrFormat("%s/%s.%02d_%s.txt", dir,
                                     state.program.name, index, pass);
  std::ofstream out(path);
  out << DumpState(state);
  out.close();
  if (ec || !out) {
    return absl::FailedPreconditionError(absl::StrCat(
        from, " = \"", dir, "\": cannot write ", path,
        ec ? absl::StrCat(" (", ec.message(), ")") : std::string()));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> PassNames() {
  std::vector<std::string> names;
  for (const Pass& p : kPasses) names.push_back(p.name);
  return names;
}

std::string DumpState(const LoweringState& state) {
  std::string out = ir::ToString(state.program);
  if (!state.layouts.empty()) {
    std::map<std::string, std::string> sorted;
    for (const auto& [b, l] : state.layouts) sorted[b->name] = l.ToString();
    out += "# fragment layouts\n";
    for (const auto& [n, l] : sorted)
      absl::StrAppend(&out, "#   ", n, ": ", l, "\n");
  }
  if (!state.gemm_plans.empty()) {
    out += "# gemm plans\n";
    for (const PlannedGemm& p : state.gemm_plans) {
      const auto* g = p.gemm.As<ir::GemmNode>();
      absl::StrAppend(&out, "#   ", g->c.buffer->name,
                      " += ", g->a.buffer->name, " * ", g->b.buffer->name, ": ",
                      p.plan.ToString(), "\n");
    }
  }
  if (!state.smem.offset.empty()) {
    std::map<std::string, std::string> sorted;
    for (const auto& [b, off] : state.smem.offset) {
      sorted[b->name] =
          absl::StrCat("offset ", off, ", ", state.smem.bytes.at(b), " bytes");
    }
    absl::StrAppend(&out, "# shared memory: ", state.smem.total_bytes,
                    " bytes\n");
    for (const auto& [n, t] : sorted)
      absl::StrAppend(&out, "#   ", n, ": ", t, "\n");
  }
  return out + StateText(state);
}

absl::Status RunPass(LoweringState& state, std::string_view name) {
  if (absl::Status s = Check(state); !s.ok()) return s;
  for (const Pass& p : kPasses)
    if (name == p.name) return p.run(state);
  return absl::InvalidArgumentError(
      absl::StrCat("no pass named \"", std::string(name),
                   "\" (passes: ", absl::StrJoin(PassNames(), ", "), ")"));
}

absl::Status RunPasses(LoweringState& state, std::string_view stop_after) {
  if (absl::Status s = Check(state); !s.ok()) return s;
  std::string dir = state.config.dump_ir;
  const char* from = "pass_config.dump_ir";
  if (dir.empty()) {
    if (const char* env = std::getenv("TESSEL_DUMP_IR")) dir = env;
    from = "$TESSEL_DUMP_IR";
  }
  if (!dir.empty()) {
    if (absl::Status s = Dump(state, dir, from, 0, "input"); !s.ok()) return s;
  }
  int index = 1;
  for (const Pass& p : kPasses) {
    if (absl::Status s = p.run(state); !s.ok()) return s;
    if (!dir.empty()) {
      if (absl::Status s = Dump(state, dir, from, index, p.name); !s.ok())
        return s;
    }
    ++index;
    if (stop_after == p.name) break;
  }
  return absl::OkStatus();
}

}  // namespace tessel::passes
