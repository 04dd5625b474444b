#include "src/passes/tma_boxes.h"

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

constexpr int64_t kMaxBoxExtent = 256;  // cuTensorMapEncodeTiled's limit
constexpr int kMaxRank = 5;

std::optional<TmaCopyPlan> Refuse(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::optional<TmaCopyPlan> PlanTmaCopy(const ir::CopyNode& c,
                                       const LoweringState& state,
                                       std::string* why) {
  const ir::Region &src = c.src, &dst = c.dst;
  const ir::Buffer &g = src.buffer, &s = dst.buffer;
  if (g->scope != ir::Scope::kGlobal || s->scope != ir::Scope::kShared)
    return Refuse(why, "not a global -> shared copy");
  if (g->dtype != s->dtype) return Refuse(why, "converts its elements");
  const int eb = dtype_bytes(g->dtype);
  if (eb != 1 && eb != 2 && eb != 4)
    return Refuse(why, "elements of an unmapped size");
  if (g->rank() > kMaxRank) return Refuse(why, "tensor of rank above 5");
  int param = -1;
  for (size_t i = 0; i < state.program.params.size(); ++i)
    if (state.program.params[i].get() == g.get()) param = static_cast<int>(i);
  if (param < 0) return Refuse(why, "source is not a kernel parameter");
  if (!state.InnerContiguous(g.get()))
    return Refuse(why, "a strided view whose innermost stride is not 1");

  // The destination: a whole tile, one stage of a staged tile, a range of
  // its rows (a paged gather fills one tile page by page), or one row (a
  // 1-d tile, a stage of a staged 1-d tile: the rows of an unswizzled tile
  // are contiguous, so a one-row box lands at any row).
  auto shape = ConstShape(s->shape);
  if (!shape || s->rank() < 1) return Refuse(why, "not a shared tile");
  const int r = s->rank();
  const int64_t cols = (*shape)[r - 1];
  auto is_const = [](const ir::Expr& e, int64_t v) {
    auto c = ir::AsConstInt(e);
    return c && *c == v;
  };
  if (!is_const(dst.extent[r - 1], cols) || !is_const(dst.start[r - 1], 0))
    return Refuse(why, "writes part of its tile");
  const bool whole_rows = r >= 2 &&
                          is_const(dst.extent[r - 2], (*shape)[r - 2]) &&
                          is_const(dst.start[r - 2], 0);
  std::optional<int64_t> row0, row_count;
  if (r >= 2 && !whole_rows) {
    row0 = ir::AsConstInt(dst.start[r - 2]);
    row_count = ir::AsConstInt(dst.extent[r - 2]);
  }
  const bool row_range = row0 && row_count && *row_count > 1;
  for (int d = 0; d < r - (whole_rows || row_range ? 2 : 1); ++d)
    if (!is_const(dst.extent[d], 1))
      return Refuse(why, "writes part of its tile");
  if (row_range) {
    // The box must start where the tile's layout starts a row: on a
    // swizzle period (8 rows) of a swizzled tile, on a 128-byte line of an
    // unswizzled one.
    const bool periods = s->layout.kind == ir::Layout::Kind::kSwizzled
                             ? *row0 % 8 == 0 && *row_count % 8 == 0
                             : *row0 * cols * eb % 128 == 0;
    if (!periods)
      return Refuse(why, "writes rows that do not start a swizzle period");
  } else if (!whole_rows) {
    if (s->layout.kind == ir::Layout::Kind::kSwizzled)
      return Refuse(why, "writes part of its tile");
    // The TMA writes shared memory from 128-byte-aligned addresses: each
    // row (each stage of a staged 1-d tile) must start on one.
    if (cols * eb % 128 != 0)
      return Refuse(why, "one row not of whole 128-byte lines");
  }
  const int64_t rows =
      whole_rows ? (*shape)[r - 2] : (row_range ? *row_count : 1);

  // The source box: constant extents whose non-unit ones are the tile's
  // rows and columns, the innermost one its columns.
  TmaCopyPlan plan;
  plan.param = param;
  std::vector<int64_t> squeezed;
  for (size_t d = 0; d < src.extent.size(); ++d) {
    auto v = ir::AsConstInt(src.extent[d]);
    // The innermost extent is checked below, once a tile of 128-byte atoms
    // has cut it into boxes of one atom (576 bf16 columns: 9 boxes of 64).
    const bool innermost = d + 1 == src.extent.size();
    if (!v || *v <= 0 || (!innermost && *v > kMaxBoxExtent))
      return Refuse(why, "box extent not a constant in [1, 256]");
    plan.box.push_back(*v);
    if (*v != 1) squeezed.push_back(*v);
  }
  if (plan.box.back() != cols || squeezed.empty() || squeezed.back() != cols ||
      (squeezed.size() == 2 ? squeezed[0] != rows
                            : squeezed.size() != 1 || rows != 1)) {
    return Refuse(why, "box is not the tile's rows x columns");
  }
  // The issuing thread alone computes the origin: no element reads of a
  // fragment or local (they differ between threads), only of read-only
  // tensors (cu_seqlens[b]).
  if (!ReadsOnlyUnwrittenGlobals(src.start, state.program.body))
    return Refuse(why, "origin depends on values read per thread");
  // Global strides must be multiples of 16 bytes: a constant innermost
  // dimension is checked here, a symbolic one at launch (alignment).
  if (auto last = ir::AsConstInt(g->shape.back()); last && *last * eb % 16)
    return Refuse(why, "rows of the tensor are not whole 16-byte chunks");

  const int64_t row_bytes = cols * eb;
  plan.box_cols = cols;
  if (s->layout.kind == ir::Layout::Kind::kSwizzled && row_bytes >= 32) {
    if (row_bytes == 32 || row_bytes == 64 || row_bytes == 128) {
      plan.swizzle_bytes = static_cast<int>(row_bytes);
    } else if (s->layout.atoms && row_bytes % 128 == 0) {
      plan.swizzle_bytes = 128;
      plan.boxes = static_cast<int>(row_bytes / 128);
      plan.box_cols = 128 / eb;
      plan.box.back() = plan.box_cols;
    } else {
      return Refuse(why, "swizzled rows wider than 128 bytes, not atoms");
    }
  } else if (row_bytes % 16 != 0) {
    return Refuse(why, "tile rows are not whole 16-byte chunks");
  }
  if (plan.box_cols > kMaxBoxExtent)
    return Refuse(why, "box extent not a constant in [1, 256]");
  plan.bytes = rows * cols * eb;
  if (squeezed.size() == 2) {
    for (size_t d = 0; d < plan.box.size() && plan.rows_dim < 0; ++d)
      if (plan.box[d] != 1) plan.rows_dim = static_cast<int>(d);
  }
  return plan;
}

std::optional<TmaCopyPlan> HalfRowsPlan(const TmaCopyPlan& plan) {
  if (plan.rows_dim < 0) return std::nullopt;
  const int64_t rows = plan.box[plan.rows_dim];
  if (rows % 16 != 0) return std::nullopt;
  TmaCopyPlan half = plan;
  half.box[plan.rows_dim] = rows / 2;
  half.bytes = plan.bytes / 2;
  return half;
}

}  // namespace tessel::passes
