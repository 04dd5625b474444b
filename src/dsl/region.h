// Turning tile operands (whole buffers, start points, slices) into regions.
//
//   ASSIGN_OR_RETURN(auto regions, dsl::ResolvePair(src, dst));  // copy
//   ASSIGN_OR_RETURN(ir::Region c, dsl::ResolveWhole(C));          // gemm
//
// A start point takes its extents from the other operand's non-unit extents,
// aligned to its trailing dimensions; the leading ones get extent 1 (TileLang's
// rule). `A(b, T::slice(s, e))` gives extent e - s, `T::all` the whole dim.
#ifndef TESSEL_SRC_DSL_REGION_H_
#define TESSEL_SRC_DSL_REGION_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/ir/buffer.h"
#include "tessel/builder.h"

namespace tessel::dsl {

struct PartialRegion {
  ir::Region region;
  bool needs_extent = false;  // a start point: extents still to come
};

absl::StatusOr<PartialRegion> ToPartial(const TileArg& arg);
absl::StatusOr<std::pair<ir::Region, ir::Region>> ResolvePair(const TileArg& a,
                                                              const TileArg& b);
absl::StatusOr<ir::Region> ResolveWhole(const TileArg& arg);

// The element's indices, checked against the buffer's rank.
absl::StatusOr<std::vector<ir::Expr>> ElementIndices(const BufferRef& ref);

// "A (global f16 [M, 1024])"
std::string Describe(const ir::Buffer& buffer);

}  // namespace tessel::dsl

#endif  // TESSEL_SRC_DSL_REGION_H_
