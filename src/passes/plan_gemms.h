// The per-gemm plan: for every gemm, which instruction runs it (FMA loops,
// mma.sync, or wgmma on sm_90a), the warp grid and warp tiles, and how each
// operand reaches the tensor cores (ldmatrix, registers, or a shared-memory
// descriptor). Decided here once; the lowering reads the plan
// (LoweringState::GemmPlanOf) and the IR dumps print it.
//
//   RETURN_IF_ERROR(passes::PlanGemms(state));
//   const passes::GemmPlan* p = state.GemmPlanOf(gemm);
//   if (p->instruction == passes::GemmInstruction::kWgmma) { ... }
//
// Runs right before lower_tile_ops: the wgmma operand checks read the
// operand regions as inject_pipeline left them (stage indices), and the
// warp grid comes from the accumulator layout layout inference chose.
#ifndef TESSEL_SRC_PASSES_PLAN_GEMMS_H_
#define TESSEL_SRC_PASSES_PLAN_GEMMS_H_

#include <string>

#include "absl/status/status.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

absl::Status PlanGemms(LoweringState& state);

// Why a gemm that PlanGemms put on FMA loops is there, in the user's terms
// (CompiledKernel::schedule() prints it): "N = 4 is below the 8 columns of
// the smallest tensor-core tile", "A and B are f32 and f32, ...".
std::string FmaReason(const ir::GemmNode& gemm, const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_PLAN_GEMMS_H_
