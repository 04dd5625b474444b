// Visitor and mutator bases that every pass builds on.
//
//   // Count the copies of a program.
//   class CopyCounter : public ir::IRVisitor {
//    public:
//     int n = 0;
//     void Visit(const ir::CopyNode* op) override { ++n; IRVisitor::Visit(op);
//     }
//   };
//   CopyCounter c; c.VisitStmt(program.body);
//
//   // Replace a variable (a mutator rebuilds only what changed).
//   class Subst : public ir::IRMutator {
//     ir::Expr Visit(const ir::VarNode* op) override { ... }
//   };
//   ir::Stmt s2 = Subst().MutateStmt(s);
//
// The default Visit of each node walks all its children in field order:
// expressions, regions (VisitRegion: buffer use, then starts, extents) and
// statements. Buffers are reported through VisitBuffer wherever a node names
// one (loads, stores, regions, allocations, tile ops, barriers).
#ifndef TESSEL_SRC_IR_VISITOR_H_
#define TESSEL_SRC_IR_VISITOR_H_

#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

[[noreturn]] void UnknownNodeKind(const char* what);  // a corrupt node

// Calls f with the node of e (or s) as its own class: one switch over the
// kinds of src/ir/node_kinds.h for every walker.
template <typename F>
decltype(auto) DispatchExpr(const Expr& e, F&& f) {
  switch (e->kind) {
#define TESSEL_IR_CASE(K, N) \
  case ExprKind::k##K:       \
    return f(e.As<N>());
    TESSEL_IR_EXPR_NODES(TESSEL_IR_CASE)
#undef TESSEL_IR_CASE
  }
  UnknownNodeKind("expr");
}

template <typename F>
decltype(auto) DispatchStmt(const Stmt& s, F&& f) {
  switch (s->kind) {
#define TESSEL_IR_CASE(K, N, name) \
  case StmtKind::k##K:             \
    return f(s.As<N>());
    TESSEL_IR_STMT_NODES(TESSEL_IR_CASE)
#undef TESSEL_IR_CASE
  }
  UnknownNodeKind("stmt");
}

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  // Dispatchers (undefined handles are skipped).
  virtual void VisitExpr(const Expr& e);
  virtual void VisitStmt(const Stmt& s);
  virtual void VisitRegion(const Region& r);
  virtual void VisitBuffer(const Buffer& b) {}

  virtual void Visit(const IntImmNode* op) {}
  virtual void Visit(const FloatImmNode* op) {}
  virtual void Visit(const VarNode* op) {}
  virtual void Visit(const BinaryNode* op);
  virtual void Visit(const UnaryNode* op);
  virtual void Visit(const SelectNode* op);
  virtual void Visit(const CastNode* op);
  virtual void Visit(const MathNode* op);
  virtual void Visit(const CallNode* op);
  virtual void Visit(const LoadNode* op);

  virtual void Visit(const KernelNode* op);
  virtual void Visit(const ForNode* op);
  virtual void Visit(const IfThenElseNode* op);
  virtual void Visit(const StoreNode* op);
  virtual void Visit(const SeqNode* op);
  virtual void Visit(const AllocateNode* op);
  virtual void Visit(const CopyNode* op);
  virtual void Visit(const GemmNode* op);
  virtual void Visit(const FillNode* op);
  virtual void Visit(const ReduceNode* op);
  virtual void Visit(const CumsumNode* op);
  virtual void Visit(const AtomicNode* op);
  virtual void Visit(const SyncThreadsNode* op) {}
  virtual void Visit(const MbarrierInitNode* op);
  virtual void Visit(const MbarrierArriveNode* op);
  virtual void Visit(const MbarrierExpectTxNode* op);
  virtual void Visit(const MbarrierWaitParityNode* op);
  virtual void Visit(const AnnotateLayoutNode* op);
  virtual void Visit(const UseSwizzleNode* op) {}
  virtual void Visit(const PrintNode* op);
  virtual void Visit(const WarpSpecializeNode* op);
  virtual void Visit(const EvaluateNode* op);
};

// Rebuilds the tree bottom-up; a node whose children all come back unchanged
// (same handles) is returned as is, so unchanged subtrees stay shared.
class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr MutateExpr(const Expr& e);
  virtual Stmt MutateStmt(const Stmt& s);
  virtual Region MutateRegion(const Region& r);
  // Where a node names a buffer; the default keeps it.
  virtual Buffer MutateBuffer(const Buffer& b) { return b; }

  virtual Expr Visit(const IntImmNode* op);
  virtual Expr Visit(const FloatImmNode* op);
  virtual Expr Visit(const VarNode* op);
  virtual Expr Visit(const BinaryNode* op);
  virtual Expr Visit(const UnaryNode* op);
  virtual Expr Visit(const SelectNode* op);
  virtual Expr Visit(const CastNode* op);
  virtual Expr Visit(const MathNode* op);
  virtual Expr Visit(const CallNode* op);
  virtual Expr Visit(const LoadNode* op);

  virtual Stmt Visit(const KernelNode* op);
  virtual Stmt Visit(const ForNode* op);
  virtual Stmt Visit(const IfThenElseNode* op);
  virtual Stmt Visit(const StoreNode* op);
  virtual Stmt Visit(const SeqNode* op);
  virtual Stmt Visit(const AllocateNode* op);
  virtual Stmt Visit(const CopyNode* op);
  virtual Stmt Visit(const GemmNode* op);
  virtual Stmt Visit(const FillNode* op);
  virtual Stmt Visit(const ReduceNode* op);
  virtual Stmt Visit(const CumsumNode* op);
  virtual Stmt Visit(const AtomicNode* op);
  virtual Stmt Visit(const SyncThreadsNode* op);
  virtual Stmt Visit(const MbarrierInitNode* op);
  virtual Stmt Visit(const MbarrierArriveNode* op);
  virtual Stmt Visit(const MbarrierExpectTxNode* op);
  virtual Stmt Visit(const MbarrierWaitParityNode* op);
  virtual Stmt Visit(const AnnotateLayoutNode* op);
  virtual Stmt Visit(const UseSwizzleNode* op);
  virtual Stmt Visit(const PrintNode* op);
  virtual Stmt Visit(const WarpSpecializeNode* op);
  virtual Stmt Visit(const EvaluateNode* op);

 protected:
  // The handle of a node being visited (for "unchanged" results).
  static Expr Self(const ExprNode* op) { return Expr(op->shared_from_this()); }
  static Stmt Self(const StmtNode* op) { return Stmt(op->shared_from_this()); }
  // Var binders (loops, kernels) are kept: a mutator that renames variables
  // overrides the binding node's Visit.
  std::vector<Expr> MutateExprs(const std::vector<Expr>& v, bool* changed);
};

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_VISITOR_H_
