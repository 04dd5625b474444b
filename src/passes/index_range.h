// Interval arithmetic on integer index expressions for the shared-memory
// bounds check (shared_bounds.h): [lo, hi] with open ends and the step every
// value is a multiple of, through + - * / % min max and the bit operations
// swizzles use (& ^ | >> <<).
//
// clang-format off
//   IndexRange x{0, 127, 1}, eight = IndexRange::Of(8);
//   CombineRanges(ir::BinaryOp::kMul, x, eight);   // [0, 1016] step 8
// clang-format on
#ifndef TESSEL_SRC_PASSES_INDEX_RANGE_H_
#define TESSEL_SRC_PASSES_INDEX_RANGE_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "src/ir/op.h"

namespace tessel::passes {

// An open end: beyond any index.
inline constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max() / 4;

// [lo, hi], either end possibly open (+-kOpenEnd), every value a multiple
// of step (0: the value is 0), so that an even column plus a 2-element
// store ends at the row's end, not past it.
struct IndexRange {
  int64_t lo, hi;
  int64_t step = 1;
  static IndexRange Of(int64_t c) { return {c, c, c < 0 ? -c : c}; }
};

// v saturated to the open ends.
int64_t ClampToOpen(__int128 v);
// The ends moved onto multiples of the step.
IndexRange Tight(IndexRange r);
// x op y; nullopt where the operation is not followed (a division by a
// non-constant, a shift of a negative value).
std::optional<IndexRange> CombineRanges(ir::BinaryOp op, IndexRange x,
                                        IndexRange y);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_INDEX_RANGE_H_
