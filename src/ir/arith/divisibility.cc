#include "src/ir/arith/divisibility.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "src/ir/op.h"

namespace tessel::ir::arith {

int64_t KnownDivisor(const Expr& e) {
  constexpr int64_t kEverything = int64_t{1} << 30;
  if (auto c = AsConstInt(e)) return *c == 0 ? kEverything : std::abs(*c);
  if (const auto* b = e.As<BinaryNode>()) {
    switch (b->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
        return std::gcd(KnownDivisor(b->a), KnownDivisor(b->b));
      case BinaryOp::kMul:
        return std::min<int64_t>(KnownDivisor(b->a) * KnownDivisor(b->b),
                                 kEverything);
      case BinaryOp::kShl:
        if (auto c = AsConstInt(b->b)) return KnownDivisor(b->a) << *c;
        return 1;
      case BinaryOp::kMod:
        if (auto c = AsConstInt(b->b)) return std::gcd(KnownDivisor(b->a), *c);
        return 1;
      default:
        return 1;
    }
  }
  if (const auto* c = e.As<CastNode>()) return KnownDivisor(c->value);
  return 1;
}

}  // namespace tessel::ir::arith
