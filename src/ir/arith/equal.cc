#include "src/ir/arith/equal.h"

#include <cmath>

#include "src/ir/buffer.h"

namespace tessel::ir {

bool ExprsDeepEqual(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ExprDeepEqual(a[i], b[i])) return false;
  }
  return true;
}

bool ExprDeepEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::kIntImm:
      return a.As<IntImmNode>()->value == b.As<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.As<FloatImmNode>()->value, y = b.As<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::kVar:
      return false;  // identity only, checked above
    case ExprKind::kBinary: {
      const auto *x = a.As<BinaryNode>(), *y = b.As<BinaryNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a) &&
             ExprDeepEqual(x->b, y->b);
    }
    case ExprKind::kUnary: {
      const auto *x = a.As<UnaryNode>(), *y = b.As<UnaryNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a);
    }
    case ExprKind::kSelect: {
      const auto *x = a.As<SelectNode>(), *y = b.As<SelectNode>();
      return ExprDeepEqual(x->cond, y->cond) &&
             ExprDeepEqual(x->true_value, y->true_value) &&
             ExprDeepEqual(x->false_value, y->false_value);
    }
    case ExprKind::kCast:
      return ExprDeepEqual(a.As<CastNode>()->value, b.As<CastNode>()->value);
    case ExprKind::kMath: {
      const auto *x = a.As<MathNode>(), *y = b.As<MathNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a);
    }
    case ExprKind::kCall: {
      const auto *x = a.As<CallNode>(), *y = b.As<CallNode>();
      return x->name == y->name && ExprsDeepEqual(x->args, y->args);
    }
    case ExprKind::kLoad: {
      const auto *x = a.As<LoadNode>(), *y = b.As<LoadNode>();
      return x->buffer.same_as(y->buffer) &&
             ExprsDeepEqual(x->indices, y->indices);
    }
  }
  return false;
}

}  // namespace tessel::ir
