#include "src/passes/operand_reuse.h"

#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

// The same index for sure: the same tree, and reading no memory (two loads
// of one element may straddle a store).
bool SameIndex(const ir::Expr& a, const ir::Expr& b) {
  return ir::ExprDeepEqual(a, b) && !ir::ReadsMemory(a);
}

bool SameKey(const OperandKey& a, const OperandKey& b) {
  if (a.region.buffer.get() != b.region.buffer.get() ||
      a.transpose != b.transpose || a.tiling != b.tiling ||
      a.region.rank() != b.region.rank()) {
    return false;
  }
  for (int d = 0; d < a.region.rank(); ++d) {
    if (!SameIndex(a.region.start[d], b.region.start[d]) ||
        !SameIndex(a.region.extent[d], b.region.extent[d])) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<KeptOperand> OperandReusePlan::Find(const ir::GemmNode* g,
                                                  GemmOperand which) const {
  auto it = gemms.find(g);
  if (it == gemms.end()) return std::nullopt;
  return it->second[static_cast<int>(which)];
}

OperandReusePlan PlanOperandReuse(const std::vector<ir::Stmt>& stmts,
                                  const OperandKeyFn& key_of, int max_registers,
                                  int total_registers) {
  OperandReusePlan plan;
  int kept = 0;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const auto* first = stmts[i].As<ir::GemmNode>();
    if (first == nullptr) continue;
    for (GemmOperand which : {GemmOperand::kA, GemmOperand::kB}) {
      const int w = static_cast<int>(which);
      if (plan.Find(first, which)) continue;  // already in a chain
      std::optional<OperandKey> key = key_of(*first, which);
      if (!key || key->registers > max_registers ||
          kept + key->registers > total_registers) {
        continue;
      }
      const ir::BufferNode* buffer = key->region.buffer.get();
      std::vector<const ir::GemmNode*> readers;
      for (size_t j = i + 1; j < stmts.size(); ++j) {
        const auto* later = stmts[j].As<ir::GemmNode>();
        // The same operand again (in the same role: fragment layouts of A
        // and B differ).
        if (later != nullptr && !plan.Find(later, which)) {
          std::optional<OperandKey> k = key_of(*later, which);
          if (k && SameKey(*key, *k)) {
            readers.push_back(later);
            continue;
          }
        }
        // Anything else naming the buffer may write it: the chain ends.
        if (UsesBuffer(stmts[j], buffer)) break;
      }
      if (readers.empty()) continue;
      kept += key->registers;
      const int chain = plan.chains++;
      plan.gemms[first][w] = KeptOperand{chain, true};
      for (const ir::GemmNode* r : readers)
        plan.gemms[r][w] = KeptOperand{chain, false};
    }
  }
  return plan;
}

}  // namespace tessel::passes
