#include "src/passes/wgmma.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"
#include "src/passes/small_m_gemm.h"

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

bool IsFp8(DataType t) {
  return t == DataType::kF8E4M3 || t == DataType::kF8E5M2;
}

bool IsFp8Gemm(const ir::GemmNode& g) {
  return IsFp8(g.a.buffer->dtype) && IsFp8(g.b.buffer->dtype);
}

int WgmmaInstructionK(DataType a) { return 32 / dtype_bytes(a); }

bool WgmmaShapeFits(const ir::GemmNode& g, int threads) {
  const ir::Buffer &a = g.a.buffer, &b = g.b.buffer, &c = g.c.buffer;
  const bool fp8 = IsFp8Gemm(g);
  if (!(fp8 || (Is16Bit(a->dtype) && a->dtype == b->dtype)) ||
      c->dtype != DataType::kF32) {
    return false;
  }
  // fp8 operands are read K-major only, both from shared memory.
  if (fp8 &&
      (g.transpose_a || !g.transpose_b || a->scope != ir::Scope::kShared)) {
    return false;
  }
  bool a_ok = a->scope == ir::Scope::kShared ||
              (a->scope == ir::Scope::kFragment && !g.transpose_a);
  const int64_t b_row = RowBytes(b);
  if (!a_ok || b->scope != ir::Scope::kShared || b_row == 0 ||
      b_row % kRowBytes != 0) {
    return false;
  }
  auto ce = GemmMatrixExtents(g.c), ae = GemmMatrixExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) return false;
  const int64_t m = (*ce)[0], n = (*ce)[1];
  const int64_t k = g.transpose_a ? (*ae)[0] : (*ae)[1];
  // Each warpgroup owns m / groups rows, one m64 wgmma per 64 of them.
  const int groups = threads / 128;
  // A small-M tile (small_m_gemm.h) pads to one m64 per warpgroup; rows
  // too few for the warpgroups split N instead (WgmmaSplitsN).
  if (threads % 128 != 0 ||
      (m % (64 * groups) != 0 && SmallMPaddedRows(g, threads) == 0 &&
       !WgmmaSplitsN(g, threads))) {
    return false;
  }
  return n % 8 == 0 && k % WgmmaInstructionK(a->dtype) == 0;
}

bool WgmmaSplitsN(const ir::GemmNode& g, int threads) {
  const int groups = threads / 128;
  if (threads % 128 != 0 || groups < 2 || IsFp8Gemm(g) ||
      g.a.buffer->scope != ir::Scope::kShared ||
      SmallMPaddedRows(g, threads) != 0) {
    return false;
  }
  auto ce = GemmMatrixExtents(g.c);
  if (!ce || ce->size() != 2) return false;
  const int64_t m = (*ce)[0], n = (*ce)[1];
  return m % 64 == 0 && m % (64 * groups) != 0 && n % (8 * groups) == 0;
}

std::string WgmmaFp8Refusal(const ir::GemmNode& g, const LoweringState& state) {
  if (!IsFp8Gemm(g)) return "";
  if (state.target.arch() != "sm_90a")
    return absl::StrCat("fp8 tensor cores need wgmma (sm_90a), not ",
                        state.target.arch());
  if (state.config.disable_wgmma) return "wgmma is disabled";
  if (g.c.buffer->dtype != DataType::kF32)
    return "fp8 wgmma accumulates in f32 only";
  if (g.transpose_a || !g.transpose_b) {
    return "fp8 wgmma reads A and B K-major only: store A as [M, K] and B as "
           "[N, K] (transpose_B; the gemm sample's NT layout)";
  }
  if (g.a.buffer->scope != ir::Scope::kShared)
    return "fp8 wgmma reads A from shared memory only";
  if (!WgmmaShapeFits(g, state.threads)) {
    return "the tile does not fit wgmma: M a multiple of 64 x warpgroups, N "
           "of 8, K of 32, shared rows whole 128-byte swizzle atoms";
  }
  if (state.wgmma_declined.count(g.c.buffer.get()))
    return "its accumulator stays off wgmma (layout inference)";
  if (g.policy != ir::GemmWarpPolicy::kFullRow)
    return "its warp policy is not the full-row one wgmma needs";
  return "";
}

int WgmmaInstructionN(int64_t n) {
  const int64_t count = (n + kWgmmaMaxN - 1) / kWgmmaMaxN;
  // Equal pieces when each starts on a 64-column atom of an N-major B
  // (n = 384: 2 x 192), else 256 wide and a smaller last one.
  if (n % (64 * count) == 0 || count == 1) return static_cast<int>(n / count);
  return kWgmmaMaxN;
}

ir::Stmt PreferWgmmaWarpGrid(
    const ir::Stmt& body, int threads,
    const std::unordered_set<const ir::BufferNode*>& declined) {
  // An accumulator keeps one warp grid: switch its gemms only together.
  std::map<const ir::BufferNode*, bool> all_fit;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* g = s.As<ir::GemmNode>()) {
      // Split along N only where the user asked for full rows: the square
      // policy's 64-row tiles over two warpgroups (linear attention's
      // chunks) keep mma.sync until that layout is measured there.
      bool fits = g->policy == ir::GemmWarpPolicy::kSquare &&
                  WgmmaShapeFits(*g, threads) && !WgmmaSplitsN(*g, threads) &&
                  !declined.count(g->c.buffer.get());
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
// (stepped 32 bytes at a time inside a 128-byte atom row), else M/N-major
// (16-bit types only), its
// columns starting on an atom. Rows wider than one atom must be stored
// atom after atom (Layout::atoms), LBO apart.
std::optional<WgmmaOperand> SharedOperand(const ir::Region& r, bool k_major) {
  const ir::Buffer& b = r.buffer;
  const int64_t row_bytes = RowBytes(b);
  if (b->scope != ir::Scope::kShared || row_bytes == 0 ||
      row_bytes % kRowBytes != 0 ||
      b->layout.kind != ir::Layout::Kind::kSwizzled ||
      (b->layout.swizzle_bytes != 0 && b->layout.swizzle_bytes != 128)) {
    return std::nullopt;
  }
  auto rows = ir::AsConstInt(b->shape[b->rank() - 2]);
  if (!rows || *rows % 8 != 0) return std::nullopt;
  WgmmaOperand o{k_major};
  if (row_bytes > kRowBytes) {
    if (!b->layout.atoms) return std::nullopt;
    o.atom_bytes = static_cast<int>(*rows * kRowBytes);
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
  const int atom = kRowBytes / dtype_bytes(b->dtype);
  if (!k_major && IsFp8(b->dtype)) return std::nullopt;
  bool fits = k_major ? *col0 % WgmmaInstructionK(b->dtype) == 0
                      : *col0 % atom == 0 && *cols % 8 == 0;
  if (!fits) return std::nullopt;
  return o;
}

}  // namespace

bool WgmmaAccumulator(const ir::GemmNode& g, const LoweringState& state) {
  return WgmmaEnabled(state) && WgmmaShapeFits(g, state.threads) &&
         g.policy == ir::GemmWarpPolicy::kFullRow &&
         !state.wgmma_declined.count(g.c.buffer.get());
}

std::optional<WgmmaOperand> WgmmaOperandB(const ir::GemmNode& g,
                                          const LoweringState& state) {
  if (!WgmmaAccumulator(g, state)) return std::nullopt;
  std::optional<WgmmaOperand> b = SharedOperand(g.b, /*k_major=*/g.transpose_b);
  // Split along N, each warpgroup's columns of B start on an 8-row group
  // (K-major: its rows are n) or on a 128-byte atom (N-major).
  if (b && WgmmaSplitsN(g, state.threads)) {
    const int64_t per_group =
        (*GemmMatrixExtents(g.c))[1] / (state.threads / 128);
    const int64_t atom = kRowBytes / dtype_bytes(g.b.buffer->dtype);
    if (per_group % (b->k_major ? 8 : atom) != 0) return std::nullopt;
  }
  return b;
}

std::optional<WgmmaOperand> WgmmaOperandA(const ir::GemmNode& g,
                                          const LoweringState& state) {
  if (!WgmmaOperandB(g, state)) return std::nullopt;
  // A small-M tile's A has fewer rows than the m64 reads: ldmatrix of
  // clamped rows into registers instead.
  if (SmallMPaddedRows(g, state.threads) != 0) return std::nullopt;
  return SharedOperand(g.a, /*k_major=*/!g.transpose_a);
}

}  // namespace tessel::passes
