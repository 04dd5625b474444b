// How the warp-specialized pass (warp_specialize.h) divides a Pipelined
// loop: its body as the producer's TMA copies and the consumers'
// statements, and the staged tiles' regions with the stage index in front.
#ifndef TESSEL_SRC_PASSES_WARP_SPECIALIZE_SPLIT_H_
#define TESSEL_SRC_PASSES_WARP_SPECIALIZE_SPLIT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

// The loop's body as the producer's copies and the consumers' statements,
// in order; nullopt when it does not split. The producer takes the
// global -> shared copies, all of which the TMA must be able to make, whose
// tiles the body only reads (gemm operands, element loads), after the copy
// (an earlier read would want the previous iteration's tile); a tile is
// one copy's, or several copies' of row ranges that fill it once (a paged
// gather, one copy per page). The consumers
// take the rest: gemms, and whatever else the body does in registers (a
// softmax between two gemms).
struct Split {
  std::vector<const ir::CopyNode*> copies;
  std::vector<ir::Stmt> consumers;
  std::vector<size_t> consumer_index;  // each consumer's place in the body
  int64_t bytes = 0;
};

std::optional<Split> SplitBody(const ir::ForNode& loop,
                               const LoweringState& state);

// Regions of the staged tiles gain the stage index in front.
class StageIndex : public ir::IRMutator {
 public:
  StageIndex(const BufferMap& staged, ir::Expr stage)
      : staged_(staged), stage_(stage) {}
  ir::Region MutateRegion(const ir::Region& r) override {
    auto it = staged_.find(r.buffer.get());
    if (it == staged_.end()) return IRMutator::MutateRegion(r);
    ir::Region out{it->second, {stage_}, {ir::Expr(1)}};
    out.start.insert(out.start.end(), r.start.begin(), r.start.end());
    out.extent.insert(out.extent.end(), r.extent.begin(), r.extent.end());
    return out;
  }
  ir::Expr Visit(const ir::LoadNode* op) override {
    auto it = staged_.find(op->buffer.get());
    if (it == staged_.end()) return IRMutator::Visit(op);
    std::vector<ir::Expr> idx{stage_};
    for (const ir::Expr& i : op->indices) idx.push_back(MutateExpr(i));
    return ir::Load(it->second, idx);
  }

 private:
  const BufferMap& staged_;
  ir::Expr stage_;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WARP_SPECIALIZE_SPLIT_H_
