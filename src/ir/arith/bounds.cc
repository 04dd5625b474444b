#include "src/ir/arith/bounds.h"

#include "src/ir/op.h"

namespace tessel::ir::arith {

bool ProvablyNonNegative(const Expr& e) {
  if (auto c = AsConstInt(e)) return *c >= 0;
  if (e.As<VarNode>()) return true;
  if (const auto* c = e.As<CallNode>()) return c->name == "thread_idx";
  if (const auto* c = e.As<CastNode>()) return ProvablyNonNegative(c->value);
  if (const auto* b = e.As<BinaryNode>()) {
    switch (b->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kMul:
      case BinaryOp::kDiv:
      case BinaryOp::kMod:
      case BinaryOp::kMin:
      case BinaryOp::kCeilDiv:
      case BinaryOp::kShr:
      case BinaryOp::kBitAnd:
      case BinaryOp::kBitXor:
      case BinaryOp::kBitOr:
        return ProvablyNonNegative(b->a) && ProvablyNonNegative(b->b);
      case BinaryOp::kMax:
        return ProvablyNonNegative(b->a) || ProvablyNonNegative(b->b);
      default:
        return false;
    }
  }
  return false;
}

}  // namespace tessel::ir::arith
