// The one list of IR node kinds: X(Kind, NodeClass) for expressions,
// X(Kind, NodeClass, "name") for statements. The ExprKind / StmtKind enums,
// StmtKindName and ir::DispatchExpr / DispatchStmt (src/ir/visitor.h:
// what IRVisitor, IRMutator, the printer and the structural hash switch
// through) are made from it, so a new node is one line here, its class and
// its Visit methods.
#ifndef TESSEL_SRC_IR_NODE_KINDS_H_
#define TESSEL_SRC_IR_NODE_KINDS_H_

// Expressions.
#define TESSEL_IR_EXPR_NODES(X)                                             \
  X(IntImm, IntImmNode)     /* integer or bool constant */                  \
  X(FloatImm, FloatImmNode) /* floating point constant */                   \
  X(Var, VarNode)           /* loop variable, block index, symbolic size */ \
  X(Binary, BinaryNode)     /* arithmetic, comparison, logic, ... */        \
  X(Unary, UnaryNode)       /* -x, !x, ~x */                                \
  X(Select, SelectNode)     /* cond ? a : b */                              \
  X(Cast, CastNode)         /* dtype conversion */                          \
  X(Math, MathNode)         /* exp, log, sqrt, ... */                       \
  X(Call, CallNode)         /* named intrinsic, for lowered code */         \
  X(Load, LoadNode)         /* buffer element read */

// Statements: scopes, plain statements, tile ops, barriers, annotations.
#define TESSEL_IR_STMT_NODES(X)                                         \
  X(Kernel, KernelNode, "kernel")                                       \
  X(For, ForNode, "for")                                                \
  X(IfThenElse, IfThenElseNode, "if")                                   \
  X(Store, StoreNode, "store")                                          \
  X(Seq, SeqNode, "seq")                                                \
  X(Allocate, AllocateNode, "allocate")                                 \
  X(Copy, CopyNode, "copy")                                             \
  X(Gemm, GemmNode, "gemm")                                             \
  X(Fill, FillNode, "fill")                                             \
  X(Reduce, ReduceNode, "reduce")                                       \
  X(Cumsum, CumsumNode, "cumsum")                                       \
  X(Atomic, AtomicNode, "atomic")                                       \
  X(SyncThreads, SyncThreadsNode, "sync_threads")                       \
  X(MbarrierInit, MbarrierInitNode, "mbarrier_init")                    \
  X(MbarrierArrive, MbarrierArriveNode, "mbarrier_arrive")              \
  X(MbarrierExpectTx, MbarrierExpectTxNode, "mbarrier_expect_tx")       \
  X(MbarrierWaitParity, MbarrierWaitParityNode, "mbarrier_wait_parity") \
  X(AnnotateLayout, AnnotateLayoutNode, "annotate_layout")              \
  X(UseSwizzle, UseSwizzleNode, "use_swizzle")                          \
  X(Print, PrintNode, "print")                                          \
  X(WarpSpecialize, WarpSpecializeNode, "warp_specialize")              \
  X(Evaluate, EvaluateNode, "evaluate")

#endif  // TESSEL_SRC_IR_NODE_KINDS_H_
