#include "src/passes/plan_gemms.h"

#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/passes/gemm_warp_grid.h"
#include "src/passes/ir_util.h"
#include "src/passes/small_m_gemm.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

// The warp grid and tiles from the accumulator's (mma or wgmma) layout.
void PlanWarpTiles(const ir::GemmNode& g, const FragmentLayout& l, int wm,
                   int wn, GemmPlan& p) {
  p.warps_m = wm;
  p.warps_n = wn;
  p.warp_m = l.tile_rows() / wm;
  if (l.padded_rows() != 0) p.small_m = l.shape()[0];
  p.warp_n = l.shape()[1] / wn;
  p.m_tiles = l.mi();
  p.n_tiles = l.ni();
  p.warpgroup_rows = l.warpgroup_rows();
  auto ae = *GemmMatrixExtents(g.a);
  p.k_steps = static_cast<int>((g.transpose_a ? ae[0] : ae[1]) / p.k_step);
}

// fp8: wgmma k32 with both operands through descriptors, or FMA loops
// (there is no fp8 mma.sync path).
GemmPlan PlanFp8(const ir::GemmNode& g, const LoweringState& state,
                 GemmPlan fma) {
  std::optional<WgmmaOperand> a = WgmmaOperandA(g, state);
  std::optional<WgmmaOperand> b = WgmmaOperandB(g, state);
  if (!a || !b) {
    fma.fma_reason =
        "its shared tiles are not SWIZZLE_128B operands of wgmma (rows of "
        "whole 128-byte atoms, regions starting on one)";
    return fma;
  }
  GemmPlan p;
  auto [wm, wn] = TensorCoreWarpGrid(g, state);
  const FragmentLayout& l = state.layouts.at(g.c.buffer.get());
  p.k_step = WgmmaInstructionK(g.a.buffer->dtype);
  PlanWarpTiles(g, l, wm, wn, p);
  p.instruction = GemmInstruction::kWgmma;
  p.wgmma_n = WgmmaInstructionN(l.shape()[1]);
  p.a = {OperandPath::kDescriptor, a->k_major, a->atom_bytes};
  p.b = {OperandPath::kDescriptor, b->k_major, b->atom_bytes};
  return p;
}

GemmPlan Plan(const ir::GemmNode& g, const LoweringState& state) {
  GemmPlan p;
  p.fma_reason = WgmmaFp8Refusal(g, state);
  auto [wm, wn] = TensorCoreWarpGrid(g, state);
  auto layout = state.layouts.find(g.c.buffer.get());
  if (wm == 0 || layout == state.layouts.end() ||
      layout->second.kind() != FragmentLayout::Kind::kMma) {
    return p;  // FMA: the operands read element by element
  }
  if (IsFp8Gemm(g)) return PlanFp8(g, state, p);
  const FragmentLayout& l = layout->second;
  // Warpgroups along N: 4 warps down each warpgroup's columns.
  if (l.warpgroup_cols()) std::tie(wm, wn) = std::pair{4, l.warps_n()};
  PlanWarpTiles(g, l, wm, wn, p);
  p.a.path = g.a.buffer->scope == ir::Scope::kFragment ? OperandPath::kRegisters
                                                       : OperandPath::kLdmatrix;
  p.b.path = OperandPath::kLdmatrix;
  p.instruction = GemmInstruction::kMmaSync;
  if (std::optional<WgmmaOperand> b = WgmmaOperandB(g, state)) {
    p.instruction = GemmInstruction::kWgmma;
    p.wgmma_n = WgmmaInstructionN(p.warp_n);
    p.b = {OperandPath::kDescriptor, b->k_major, b->atom_bytes};
    if (std::optional<WgmmaOperand> a = WgmmaOperandA(g, state))
      p.a = {OperandPath::kDescriptor, a->k_major, a->atom_bytes};
  }
  return p;
}

std::string OperandText(const GemmOperandPlan& o) {
  switch (o.path) {
    case OperandPath::kElements:
      return "elements";
    case OperandPath::kLdmatrix:
      return "ldmatrix";
    case OperandPath::kRegisters:
      return "registers";
    case OperandPath::kDescriptor:
      return absl::StrCat(
          "descriptor (", o.k_major ? "K" : "MN", "-major",
          o.atom_bytes ? absl::StrCat(", atoms ", o.atom_bytes, " B apart")
                       : "",
          ")");
  }
  return "";
}

}  // namespace

std::string GemmPlan::ToString() const {
  if (instruction == GemmInstruction::kFma) return "fma";
  std::string what = "mma.sync";
  if (instruction == GemmInstruction::kWgmma) {
    // One m64 per m16 tile of a warp, one instruction per N piece.
    const int per_step =
        m_tiles * static_cast<int>((warp_n + wgmma_n - 1) / wgmma_n);
    what =
        per_step == 1 && wgmma_n == warp_n
            ? "wgmma"
            : absl::StrCat("wgmma ", per_step, " x m64n", wgmma_n, "k", k_step);
  }
  if (small_m != 0) {
    absl::StrAppend(&what, " (M = ", small_m, " padded to ", warp_m * warps_m,
                    " rows)");
  }
  return absl::StrCat(what, ", warps ", warps_m, "x", warps_n, ", warp tile ",
                      warp_m, "x", warp_n, " (", m_tiles, "x", n_tiles,
                      " tiles), ", k_steps, " k", k_step, " steps, A ",
                      OperandText(a), ", B ", OperandText(b));
}

const GemmPlan* LoweringState::GemmPlanOf(const ir::GemmNode* gemm) const {
  for (const PlannedGemm& p : gemm_plans)
    if (p.gemm.get() == gemm) return &p.plan;
  return nullptr;
}

std::string FmaReason(const ir::GemmNode& g, const LoweringState& state) {
  const GemmPlan* p = state.GemmPlanOf(&g);
  if (p != nullptr && !p->fma_reason.empty()) return p->fma_reason;
  if (IsFp8Gemm(g)) return "";
  std::string why = MmaPathRefusal(g, state.threads);
  if (!why.empty()) return why;
  // The dtypes and shapes fit: the accumulator's layout did not.
  return absl::StrCat("the accumulator ", g.c.buffer->name,
                      " is not laid out for the tensor cores");
}

absl::Status PlanGemms(LoweringState& state) {
  state.gemm_plans.clear();
  ForEachStmt(state.program.body, [&](const ir::Stmt& s) {
    if (const auto* g = s.As<ir::GemmNode>())
      state.gemm_plans.push_back({s, Plan(*g, state)});
  });
  return absl::OkStatus();
}

}  // namespace tessel::passes
