#include "src/passes/warp_specialize_split.h"

#include <unordered_set>

#include "src/passes/tma_boxes.h"

namespace tessel::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// Whether s writes `tile` or reads it other than as a gemm operand or
// element by element (a softmax reading one row of LSE): both stay inside
// the iteration whose stage holds it.
bool UsedBesidesReads(const Stmt& s, const ir::BufferNode* tile) {
  struct DropReads : ir::IRMutator {
    explicit DropReads(const ir::BufferNode* tile) : tile(tile) {}
    Stmt Visit(const ir::GemmNode* op) override {
      return op->c.buffer.get() == tile ? Self(op) : ir::Seq({});
    }
    Expr Visit(const ir::LoadNode* op) override {
      if (op->buffer.get() != tile) return IRMutator::Visit(op);
      return ir::Zero(op->dtype);
    }
    const ir::BufferNode* tile;
  } drop(tile);
  return UsesBuffer(drop.MutateStmt(s), tile);
}

// Whether s copies global memory into shared memory: left to the consumers,
// such a copy would load synchronously, unpipelined.
bool LoadsSharedFromGlobal(const Stmt& s) {
  bool found = false;
  ForEachStmt(s, [&](const Stmt& n) {
    const auto* c = n.As<ir::CopyNode>();
    found |= c != nullptr && c->src.buffer->scope == ir::Scope::kGlobal &&
             c->dst.buffer->scope == ir::Scope::kShared;
  });
  return found;
}

}  // namespace

std::optional<Split> SplitBody(const ir::ForNode& loop,
                               const LoweringState& state) {
  std::vector<Stmt> stmts{loop.body};
  if (const auto* seq = loop.body.As<ir::SeqNode>()) stmts = seq->stmts;
  Split split;
  std::unordered_set<const ir::BufferNode*> tiles;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const Stmt& s = stmts[i];
    const auto* c = s.As<ir::CopyNode>();
    std::optional<TmaCopyPlan> plan;
    if (c != nullptr) plan = PlanTmaCopy(*c, state, nullptr);
    if (!plan && LoadsSharedFromGlobal(s)) return std::nullopt;
    if (!plan) {
      split.consumers.push_back(s);
      split.consumer_index.push_back(i);
      continue;
    }
    const ir::BufferNode* tile = c->dst.buffer.get();
    if (!c->dst.IsFull() || !tiles.insert(tile).second) return std::nullopt;
    for (const Stmt& earlier : split.consumers)
      if (UsesBuffer(earlier, tile)) return std::nullopt;
    split.copies.push_back(c);
    split.bytes += plan->bytes;
  }
  bool gemm = false;
  for (const Stmt& s : split.consumers) {
    ForEachStmt(
        s, [&](const Stmt& n) { gemm |= n.As<ir::GemmNode>() != nullptr; });
    for (const ir::BufferNode* tile : tiles)
      if (UsedBesidesReads(s, tile)) return std::nullopt;
  }
  if (split.copies.empty() || !gemm) return std::nullopt;
  return split;
}

}  // namespace tessel::passes
