// Gemm operands kept in registers between the gemms of one statement list
// (operand_reuse.h decides; this names and sizes the register arrays).
#include "src/passes/lower/lowerer.h"

#include "absl/strings/str_cat.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

// The fragments a gemm's shared operand loads, for operand_reuse.
std::optional<OperandKey> Lowerer::KeyOf(const ir::GemmNode& g,
                                         GemmOperand which) {
  const ir::Region& r = which == GemmOperand::kA ? g.a : g.b;
  const GemmPlan& p = PlanOf(g);
  const GemmOperandPlan& o = which == GemmOperand::kA ? p.a : p.b;
  // Only ldmatrix fragments of a shared tile (a descriptor operand is read
  // by the tensor cores from shared memory).
  if (p.instruction == GemmInstruction::kFma ||
      r.buffer->scope != ir::Scope::kShared ||
      o.path != OperandPath::kLdmatrix) {
    return std::nullopt;
  }
  const int64_t kk = p.k_steps;
  OperandKey key;
  key.region = r;
  if (which == GemmOperand::kA) {
    key.transpose = g.transpose_a;
    // The same tiles in other rows (wgmma's spread) are other registers.
    key.tiling = {p.warps_m, p.warps_n, p.warp_m,
                  p.m_tiles, kk,        p.warpgroup_rows ? 1 : 0};
    key.registers = static_cast<int>(kk * p.m_tiles * 4);
  } else {
    key.transpose = g.transpose_b;
    key.tiling = {p.warps_m, p.warps_n, p.warp_n, p.n_tiles, kk};
    key.registers = static_cast<int>(kk * p.n_tiles * 2);
  }
  return key;
}

// 32-bit registers per thread the kernel's fragments take.
int Lowerer::FragmentRegisters() const {
  int64_t n = 0;
  for (const auto& [buffer, layout] : st_.layouts) {
    int64_t elems = 1;
    for (int64_t e : layout.local_shape()) elems *= e;
    n += (elems * dtype_bytes(buffer->dtype) + 3) / 4;
  }
  return static_cast<int>(n);
}

// Plans the operands kept in registers among a statement list's gemms
// (at most 32 registers each, and while the fragments and the kept
// operands together stay within 160 registers: past that, ptxas spills
// at 255); returns the register arrays to allocate around the list.
std::vector<ir::Buffer> Lowerer::PlanKeptOperands(
    const std::vector<Stmt>& stmts) {
  constexpr int kPerOperand = 32, kWithFragments = 160;
  OperandReusePlan plan = PlanOperandReuse(
      stmts, [&](const ir::GemmNode& g, GemmOperand w) { return KeyOf(g, w); },
      kPerOperand, std::max(0, kWithFragments - FragmentRegisters()));
  // Named in statement order (plan.gemms is keyed by pointer): the source
  // must not depend on addresses.
  std::vector<ir::Buffer> buffers(plan.chains);
  for (const Stmt& s : stmts) {
    const auto* gemm = s.As<ir::GemmNode>();
    if (gemm == nullptr) continue;
    for (GemmOperand w : {GemmOperand::kA, GemmOperand::kB}) {
      std::optional<KeptOperand> keep = plan.Find(gemm, w);
      if (!keep) continue;
      ir::Buffer& b = buffers[keep->chain];
      if (keep->fill) {
        const OperandKey key = *KeyOf(*gemm, w);
        const int64_t tiles = key.tiling[3], steps = key.tiling[4];
        const bool a = w == GemmOperand::kA;
        b = ir::MakeBuffer(absl::StrCat(a ? "a_keep" : "b_keep", kept_count_++),
                           DataType::kU32, {steps, tiles, a ? 4 : 2},
                           ir::Scope::kLocal);
      }
      kept_[gemm][static_cast<int>(w)] = std::make_pair(b, keep->fill);
    }
  }
  return buffers;
}

Stmt Lowerer::AllocateKeptOperands(const ir::SeqNode* op,
                                   const std::vector<Stmt>& lowered,
                                   const std::vector<ir::Buffer>& kept) {
  // The kept arrays exist only around this list: a gemm node met again
  // elsewhere loads its own fragments.
  for (const Stmt& s : op->stmts)
    if (const auto* g = s.As<ir::GemmNode>()) kept_.erase(g);
  Stmt seq = ir::Seq(lowered, op->loc);
  for (const ir::Buffer& b : kept)
    seq = ir::MakeStmt<ir::AllocateNode>(b, seq, op->loc);
  return seq;
}

}  // namespace tessel::passes::lower
