// The value range of an integer index expression, from the ranges of the
// variables in scope (block indices, loop variables).
//
//   ir::arith::VarRanges ranges;
//   ranges.Set(tx.get(), {0, 127, true});
//   ranges.Bounds(tx * 8 + 7);   // [7, 1023], not exact (stride 8)
#ifndef TESSEL_SRC_IR_ARITH_INTERVAL_H_
#define TESSEL_SRC_IR_ARITH_INTERVAL_H_

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "src/ir/expr.h"

namespace tessel::ir::arith {

// [lo, hi]; `exact` when every value in it is reached for some values of
// the variables (so an out-of-bounds verdict is certain, not an artefact
// of the analysis).
struct Interval {
  int64_t lo, hi;
  bool exact;
};

class VarRanges {
 public:
  void Set(const VarNode* var, Interval range) { ranges_[var] = range; }
  void Erase(const VarNode* var) { ranges_.erase(var); }

  // nullopt when e is not an integer, mentions a variable of unknown range,
  // or an operation the analysis does not follow (keeps products far from
  // overflow: operands beyond 2^40 are unknown).
  std::optional<Interval> Bounds(const Expr& e) const;

 private:
  std::unordered_map<const VarNode*, Interval> ranges_;
};

// Whether two indices provably differ for all values of the variables:
// a constant nonzero difference, or (x % n, y % n) with x - y a constant
// that n does not divide (stage indices of a multi-buffered tile).
bool ProvablyDistinct(const Expr& a, const Expr& b);

}  // namespace tessel::ir::arith

#endif  // TESSEL_SRC_IR_ARITH_INTERVAL_H_
