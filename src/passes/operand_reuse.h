// Gemm operands that stay in registers between gemms: when a later gemm of
// the same statement list loads exactly the fragments an earlier one loaded
// (same shared region, transpose and warp tiling) and nothing in between
// names that buffer, the lowering loads them once, into a register array
// that both gemms read. In linear attention, q feeds q k^T and q h, and v
// feeds k^T v and s v: a quarter of the ldmatrix traffic.
//
//   OperandReusePlan plan = PlanOperandReuse(seq->stmts, key_of, 32);
//   if (auto keep = plan.Find(&gemm, GemmOperand::kA)) ...
#ifndef TESSEL_SRC_PASSES_OPERAND_REUSE_H_
#define TESSEL_SRC_PASSES_OPERAND_REUSE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "src/ir/op.h"
#include "src/ir/stmt.h"

namespace tessel::passes {

enum class GemmOperand { kA = 0, kB = 1 };

// What must agree for two gemms to load the same fragments: the operand's
// region and transpose, and the lowering's tiling of it (warp grid, warp
// tile, mma tiles, k16 steps) in `tiling`.
struct OperandKey {
  ir::Region region;
  bool transpose = false;
  std::vector<int64_t> tiling;
  int registers = 0;  // 32-bit registers per thread the fragments take
};
// nullopt: the operand is not loaded from shared memory by ldmatrix.
using OperandKeyFn =
    std::function<std::optional<OperandKey>(const ir::GemmNode&, GemmOperand)>;

// One kept operand: the register array `chain` (numbered from 0), filled by
// the first gemm of the chain (fill) and read by the later ones.
struct KeptOperand {
  int chain = 0;
  bool fill = false;
};

struct OperandReusePlan {
  std::unordered_map<const ir::GemmNode*,
                     std::array<std::optional<KeptOperand>, 2>>
      gemms;
  int chains = 0;

  std::optional<KeptOperand> Find(const ir::GemmNode* g,
                                  GemmOperand which) const;
};

// Chains over the direct children of one statement list, in the order
// their first gemms come. Register pressure bounds them: an operand whose
// fragments take more than max_registers is never kept, and chains stop
// once the kept registers would exceed total_registers.
OperandReusePlan PlanOperandReuse(const std::vector<ir::Stmt>& stmts,
                                  const OperandKeyFn& key_of, int max_registers,
                                  int total_registers);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_OPERAND_REUSE_H_
