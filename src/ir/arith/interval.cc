#include "src/ir/arith/interval.h"

#include <algorithm>

#include "src/ir/op.h"

namespace tessel::ir::arith {

std::optional<Interval> VarRanges::Bounds(const Expr& e) const {
  if (!e.defined() || !is_int(e.dtype())) return std::nullopt;
  if (auto c = AsConstInt(e)) return Interval{*c, *c, true};
  if (const auto* v = e.As<VarNode>()) {
    auto it = ranges_.find(v);
    if (it == ranges_.end()) return std::nullopt;
    return it->second;
  }
  if (const auto* c = e.As<CastNode>()) {
    if (is_int(c->value.dtype())) return Bounds(c->value);
    return std::nullopt;
  }
  const auto* b = e.As<BinaryNode>();
  if (b == nullptr) return std::nullopt;
  std::optional<Interval> x = Bounds(b->a), y = Bounds(b->b);
  if (!x || !y) return std::nullopt;
  constexpr int64_t kBig = int64_t{1} << 40;  // far from overflow
  auto small = [&](const Interval& i) { return i.lo > -kBig && i.hi < kBig; };
  if (!small(*x) || !small(*y)) return std::nullopt;
  bool const_y = y->lo == y->hi;
  switch (b->op) {
    case BinaryOp::kAdd:
      return Interval{x->lo + y->lo, x->hi + y->hi, x->exact && y->exact};
    case BinaryOp::kSub:
      return Interval{x->lo - y->hi, x->hi - y->lo, x->exact && y->exact};
    case BinaryOp::kMul: {
      int64_t c[] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo,
                     x->hi * y->hi};
      return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4),
                      false};
    }
    case BinaryOp::kDiv:
      if (!const_y || y->lo <= 0) return std::nullopt;
      return Interval{FloorDiv(x->lo, y->lo), FloorDiv(x->hi, y->lo), x->exact};
    case BinaryOp::kCeilDiv:
      if (!const_y || y->lo <= 0) return std::nullopt;
      return Interval{-FloorDiv(-x->lo, y->lo), -FloorDiv(-x->hi, y->lo),
                      x->exact};
    case BinaryOp::kMod:
      if (!const_y || y->lo <= 0) return std::nullopt;
      if (x->lo >= 0 && x->hi < y->lo) return *x;
      return Interval{0, y->lo - 1, false};
    case BinaryOp::kMin:
      return Interval{std::min(x->lo, y->lo), std::min(x->hi, y->hi), false};
    case BinaryOp::kMax:
      return Interval{std::max(x->lo, y->lo), std::max(x->hi, y->hi), false};
    default:
      return std::nullopt;
  }
}

bool ProvablyDistinct(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return false;
  const auto* ma = a.As<BinaryNode>();
  const auto* mb = b.As<BinaryNode>();
  if (ma && mb && ma->op == BinaryOp::kMod && mb->op == BinaryOp::kMod) {
    auto sa = AsConstInt(ma->b), sb = AsConstInt(mb->b);
    if (sa && sb && *sa == *sb && *sa > 0) {
      auto d = ConstDifference(ma->a, mb->a);
      return d && FloorMod(*d, *sa) != 0;
    }
    return false;
  }
  auto d = ConstDifference(a, b);
  return d && *d != 0;
}

}  // namespace tessel::ir::arith
