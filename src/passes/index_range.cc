#include "src/passes/index_range.h"

#include <algorithm>
#include <numeric>

namespace tessel::passes {
namespace {

int Bits(int64_t v) {  // bits of a value >= 0
  int b = 0;
  while (b < 62 && (int64_t{1} << b) <= v) ++b;
  return b;
}

int TrailingZeros(int64_t step) {  // of every multiple of step
  if (step == 0) return 62;
  int z = 0;
  while (z < 62 && (step >> z) % 2 == 0) ++z;
  return z;
}

int64_t StepMul(int64_t a, int64_t b) {
  const __int128 p = __int128(a) * b;
  return p >= (int64_t{1} << 40) ? 1 : static_cast<int64_t>(p);
}

}  // namespace

int64_t ClampToOpen(__int128 v) {
  return v >= kOpenEnd    ? kOpenEnd
         : v <= -kOpenEnd ? -kOpenEnd
                          : static_cast<int64_t>(v);
}

IndexRange Tight(IndexRange r) {
  if (r.step > 1) {
    if (r.hi < kOpenEnd) r.hi = ir::FloorDiv(r.hi, r.step) * r.step;
    if (r.lo > -kOpenEnd) r.lo = -ir::FloorDiv(-r.lo, r.step) * r.step;
  }
  return r;
}

std::optional<IndexRange> CombineRanges(ir::BinaryOp op, IndexRange x,
                                        IndexRange y) {
  using B = ir::BinaryOp;
  const bool const_y = y.lo == y.hi;
  const int64_t g = std::gcd(x.step, y.step);
  if (ir::IsComparison(op) || ir::IsLogical(op)) return IndexRange{0, 1};
  switch (op) {
    case B::kAdd:
      return Tight(IndexRange{ClampToOpen(__int128(x.lo) + y.lo),
                              ClampToOpen(__int128(x.hi) + y.hi), g});
    case B::kSub:
      return Tight(IndexRange{ClampToOpen(__int128(x.lo) - y.hi),
                              ClampToOpen(__int128(x.hi) - y.lo), g});
    case B::kMul: {
      __int128 c[] = {__int128(x.lo) * y.lo, __int128(x.lo) * y.hi,
                      __int128(x.hi) * y.lo, __int128(x.hi) * y.hi};
      return Tight(IndexRange{ClampToOpen(*std::min_element(c, c + 4)),
                              ClampToOpen(*std::max_element(c, c + 4)),
                              StepMul(x.step, y.step)});
    }
    case B::kDiv:
    case B::kCeilDiv: {
      if (!const_y || y.lo <= 0) return std::nullopt;
      const int64_t d = y.lo, up = op == B::kCeilDiv ? d - 1 : 0;
      auto div = [&](int64_t v) {
        if (v >= kOpenEnd || v <= -kOpenEnd) return v;
        return ir::FloorDiv(v + up, d);
      };
      return IndexRange{div(x.lo), div(x.hi), x.step % d == 0 ? x.step / d : 1};
    }
    case B::kMod:
      if (!const_y || y.lo <= 0) return std::nullopt;
      if (x.lo >= 0 && x.hi < y.lo) return x;
      return Tight(IndexRange{0, y.lo - 1, std::gcd(x.step, y.lo)});
    case B::kMin:
      return Tight(IndexRange{std::min(x.lo, y.lo), std::min(x.hi, y.hi), g});
    case B::kMax:
      return Tight(IndexRange{std::max(x.lo, y.lo), std::max(x.hi, y.hi), g});
    case B::kBitAnd: {
      const int64_t step =
          int64_t{1} << std::max(TrailingZeros(x.step), TrailingZeros(y.step));
      if (x.lo >= 0 && y.lo >= 0)
        return Tight(IndexRange{0, std::min(x.hi, y.hi), step});
      if (y.lo >= 0) return Tight(IndexRange{0, y.hi, step});
      if (x.lo >= 0) return Tight(IndexRange{0, x.hi, step});
      return std::nullopt;
    }
    case B::kBitOr:
    case B::kBitXor: {
      // Above the bits of the smaller operand only the larger's bits.
      if (x.lo < 0 || y.lo < 0) return std::nullopt;
      const int64_t step =
          int64_t{1} << std::min(TrailingZeros(x.step), TrailingZeros(y.step));
      const int64_t big = std::max(x.hi, y.hi), small = std::min(x.hi, y.hi);
      if (big >= kOpenEnd) return IndexRange{0, kOpenEnd, step};
      const int b = Bits(small);
      return Tight(
          IndexRange{0, ((big >> b) << b) | ((int64_t{1} << b) - 1), step});
    }
    case B::kShr: {
      if (!const_y || y.lo < 0 || y.lo > 62 || x.lo < 0) return std::nullopt;
      const int z = std::max(TrailingZeros(x.step) - int(y.lo), 0);
      return IndexRange{x.lo >> y.lo,
                        x.hi >= kOpenEnd ? kOpenEnd : x.hi >> y.lo,
                        int64_t{1} << std::min(z, 40)};
    }
    case B::kShl:
      if (!const_y || y.lo < 0 || y.lo > 40) return std::nullopt;
      return CombineRanges(B::kMul, x, IndexRange::Of(int64_t{1} << y.lo));
    default:
      return std::nullopt;
  }
}

}  // namespace tessel::passes
