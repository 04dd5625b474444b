// The element operations of T.reduce_* that every reduce lowering shares:
// the combine, the pre-map (abs) and the matching warp-shuffle intrinsic.
//
//   Expr v = Combine(ir::ReduceKind::kMax, a, Pre(kind, Cast(t, x)));
//   Expr w = IntrinExpr(t, WarpReduce(kind), {Expr(32), v});
#ifndef TESSEL_SRC_PASSES_LOWER_REDUCE_OPS_H_
#define TESSEL_SRC_PASSES_LOWER_REDUCE_OPS_H_

#include <vector>

#include "src/ir/expr.h"
#include "src/ir/stmt.h"
#include "src/passes/intrinsics.h"

namespace tessel::passes::lower {

ir::Expr Combine(ir::ReduceKind k, const ir::Expr& a, const ir::Expr& b);
ir::Expr Pre(ir::ReduceKind k, const ir::Expr& v);
Intrinsic WarpReduce(ir::ReduceKind k);
// The terms combined as a balanced tree (short dependency chains).
ir::Expr CombineTree(ir::ReduceKind k, std::vector<ir::Expr> terms);

}  // namespace tessel::passes::lower

#endif  // TESSEL_SRC_PASSES_LOWER_REDUCE_OPS_H_
