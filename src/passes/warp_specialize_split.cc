#include "src/passes/warp_specialize_split.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/passes/ir_util.h"
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

// Rows [start, start + count) of its tile that copy c writes, every other
// dimension whole (one stage of a staged tile: leading extents 1); nullopt
// for another region.
std::optional<std::pair<int64_t, int64_t>> RowRange(const ir::CopyNode& c) {
  const ir::Region& dst = c.dst;
  const int r = dst.buffer->rank();
  auto shape = ConstShape(dst.buffer->shape);
  if (r < 2 || !shape) return std::nullopt;
  auto start = ir::AsConstInt(dst.start[r - 2]);
  auto count = ir::AsConstInt(dst.extent[r - 2]);
  auto col0 = ir::AsConstInt(dst.start[r - 1]);
  auto cols = ir::AsConstInt(dst.extent[r - 1]);
  if (!start || !count || !col0 || !cols || *col0 != 0 ||
      *cols != (*shape)[r - 1]) {
    return std::nullopt;
  }
  return std::make_pair(*start, *count);
}

// Whether the row ranges cover [0, rows) once each.
bool TileRows(std::vector<std::pair<int64_t, int64_t>> ranges, int64_t rows) {
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 0;
  for (const auto& [start, count] : ranges) {
    if (start != next) return false;
    next += count;
  }
  return next == rows;
}

}  // namespace

std::optional<Split> SplitBody(const ir::ForNode& loop,
                               const LoweringState& state) {
  std::vector<Stmt> stmts{loop.body};
  if (const auto* seq = loop.body.As<ir::SeqNode>()) stmts = seq->stmts;
  Split split;
  std::unordered_set<const ir::BufferNode*> tiles;
  std::unordered_map<const ir::BufferNode*,
                     std::vector<std::pair<int64_t, int64_t>>>
      parts;
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
    if (c->dst.IsFull()) {
      if (!tiles.insert(tile).second) return std::nullopt;
    } else {
      // Copies of row ranges (a paged gather, page by page) share a tile;
      // together they must fill it.
      std::optional<std::pair<int64_t, int64_t>> rows = RowRange(*c);
      if (!rows || (tiles.count(tile) > 0 && parts.count(tile) == 0))
        return std::nullopt;
      tiles.insert(tile);
      parts[tile].push_back(*rows);
    }
    for (const Stmt& earlier : split.consumers)
      if (UsesBuffer(earlier, tile)) return std::nullopt;
    split.copies.push_back(c);
    split.bytes += plan->bytes;
  }
  for (const auto& [tile, ranges] : parts) {
    auto shape = ConstShape(tile->shape);
    if (!TileRows(ranges, (*shape)[shape->size() - 2])) return std::nullopt;
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
