// T.print of a scalar: printed once per block, by thread 0.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::Visit(const ir::PrintNode* op) {
  if (op->buffer.defined()) {
    Fail(op, "T.print of a whole buffer is not supported by the CUDA path");
    return Self(op);
  }
  return MakeIf(
      Expr(tx_) == 0,
      Intrin(Intrinsic::kPrint, {Tag(op->message), MutateExpr(op->value)}));
}

}  // namespace tessel::passes::lower
