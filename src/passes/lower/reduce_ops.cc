#include "src/passes/lower/reduce_ops.h"

#include "src/ir/op.h"

namespace tessel::passes::lower {

using ir::Expr;

Expr Combine(ir::ReduceKind k, const Expr& a, const Expr& b) {
  switch (k) {
    case ir::ReduceKind::kSum:
    case ir::ReduceKind::kAbsSum:
      return a + b;
    case ir::ReduceKind::kMax:
    case ir::ReduceKind::kAbsMax:
      return ir::Max(a, b);
    case ir::ReduceKind::kMin:
      return ir::Min(a, b);
  }
  return a;
}

Expr Pre(ir::ReduceKind k, const Expr& v) {
  if (k == ir::ReduceKind::kAbsSum || k == ir::ReduceKind::kAbsMax)
    return ir::Math(ir::MathOp::kAbs, v);
  return v;
}

Intrinsic WarpReduce(ir::ReduceKind k) {
  switch (k) {
    case ir::ReduceKind::kSum:
    case ir::ReduceKind::kAbsSum:
      return Intrinsic::kWarpReduceSum;
    case ir::ReduceKind::kMax:
    case ir::ReduceKind::kAbsMax:
      return Intrinsic::kWarpReduceMax;
    case ir::ReduceKind::kMin:
      return Intrinsic::kWarpReduceMin;
  }
  return Intrinsic::kWarpReduceSum;
}

Expr CombineTree(ir::ReduceKind k, std::vector<Expr> terms) {
  while (terms.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2)
      next.push_back(Combine(k, terms[i], terms[i + 1]));
    if (terms.size() % 2 == 1) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms.front();
}

}  // namespace tessel::passes::lower
