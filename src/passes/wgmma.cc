#include "src/passes/wgmma.h"

#include <map>
#include <vector>

#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

constexpr int64_t kRowBytes = 128;  // one SWIZZLE_128B atom row

bool Is16Bit(DataType t) { return t == DataType::kF16 || t == DataType::kBF16; }

// The constant byte width of a buffer's rows (its last dim), or 0.
int64_t RowBytes(const ir::Buffer& b) {
  if (b->rank() < 2) return 0;
  auto cols = ir::AsConstInt(b->shape.back());
  return cols ? *cols * dtype_bytes(b->dtype) : 0;
}

}  // namespace

bool WgmmaEnabled(const LoweringState& state) {
  return state.target.arch() == "sm_90a" && !state.config.disable_wgmma;
}

bool WgmmaShapeFits(const ir::GemmNode& g, int threads) {
  const ir::Buffer &a = g.a.buffer, &b = g.b.buffer, &c = g.c.buffer;
  if (!Is16Bit(a->dtype) || a->dtype != b->dtype ||
      c->dtype != DataType::kF32) {
    return false;
  }
  bool a_ok = a->scope == ir::Scope::kShared ||
              (a->scope == ir::Scope::kFragment && !g.transpose_a);
  if (!a_ok || b->scope != ir::Scope::kShared || RowBytes(b) != kRowBytes)
    return false;
  auto ce = ConstSqueezedExtents(g.c), ae = ConstSqueezedExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) return false;
  const int64_t m = (*ce)[0], n = (*ce)[1];
  const int64_t k = g.transpose_a ? (*ae)[0] : (*ae)[1];
  const int warps = threads / 32;
  if (threads % 128 != 0 || m != 16 * warps) return false;
  if (n % 8 != 0 || n > 256 || k % 16 != 0) return false;
  // N-major B: one atom wide.
  return g.transpose_b || n == kRowBytes / dtype_bytes(b->dtype);
}

ir::Stmt PreferWgmmaWarpGrid(const ir::Stmt& body, int threads) {
  // An accumulator keeps one warp grid: switch its gemms only together.
  std::map<const ir::BufferNode*, bool> all_fit;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* g = s.As<ir::GemmNode>()) {
      bool fits = g->policy == ir::GemmWarpPolicy::kSquare &&
                  WgmmaShapeFits(*g, threads);
      auto [it, added] = all_fit.emplace(g->c.buffer.get(), fits);
      if (!added) it->second = it->second && fits;
    }
  });
  struct Rewrite : ir::IRMutator {
    const std::map<const ir::BufferNode*, bool>* all_fit;
    ir::Stmt Visit(const ir::GemmNode* op) override {
      if (!all_fit->at(op->c.buffer.get())) return Self(op);
      return ir::MakeStmt<ir::GemmNode>(op->a, op->b, op->c, op->transpose_a,
                                        op->transpose_b, op->clear_accum,
                                        ir::GemmWarpPolicy::kFullRow, op->loc);
    }
  } rewrite;
  rewrite.all_fit = &all_fit;
  return rewrite.MutateStmt(body);
}

namespace {

// A shared region as a SWIZZLE_128B operand: K-major when its columns are k
// (stepped 16 at a time inside the atom row), else M/N-major spanning one
// 64-element row.
std::optional<WgmmaOperand> SharedOperand(const ir::Region& r, bool k_major) {
  const ir::Buffer& b = r.buffer;
  if (b->scope != ir::Scope::kShared || RowBytes(b) != kRowBytes ||
      b->layout.kind != ir::Layout::Kind::kSwizzled) {
    return std::nullopt;
  }
  // The tile is the buffer's last two dims; leading dims (stages) are
  // single indices.
  const int rank = r.rank();
  for (int d = 0; d + 2 < rank; ++d)
    if (!ir::IsConstInt(r.extent[d], 1)) return std::nullopt;
  auto row0 = ir::AsConstInt(r.start[rank - 2]);
  auto col0 = ir::AsConstInt(r.start[rank - 1]);
  auto cols = ir::AsConstInt(r.extent[rank - 1]);
  if (!row0 || !col0 || !cols || *row0 % 8 != 0) return std::nullopt;
  bool fits = k_major
                  ? *col0 % 16 == 0
                  : *col0 == 0 && *cols * dtype_bytes(b->dtype) == kRowBytes;
  if (!fits) return std::nullopt;
  return WgmmaOperand{k_major};
}

bool Takes(const ir::GemmNode& g, const LoweringState& state) {
  return WgmmaEnabled(state) && WgmmaShapeFits(g, state.threads) &&
         g.policy == ir::GemmWarpPolicy::kFullRow;
}

}  // namespace

std::optional<WgmmaOperand> WgmmaOperandB(const ir::GemmNode& g,
                                          const LoweringState& state) {
  if (!Takes(g, state)) return std::nullopt;
  return SharedOperand(g.b, /*k_major=*/g.transpose_b);
}

std::optional<WgmmaOperand> WgmmaOperandA(const ir::GemmNode& g,
                                          const LoweringState& state) {
  if (!WgmmaOperandB(g, state)) return std::nullopt;
  // M-major: one warpgroup's 64 rows are the whole 64-element row.
  if (g.transpose_a && state.threads != 128) return std::nullopt;
  return SharedOperand(g.a, /*k_major=*/!g.transpose_a);
}

}  // namespace tessel::passes
