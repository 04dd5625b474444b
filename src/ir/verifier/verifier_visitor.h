// The visitor behind ir::Verify (src/ir/verifier.h), split by what it
// checks: checks.cc (the walk's plumbing and the checks the ops share),
// statements.cc (scopes, loops, element loads and stores, annotations),
// tile_ops.cc (copy, gemm, fill, reduce, cumsum, atomics) and barriers.cc
// (__syncthreads and mbarriers). The first error wins; later visits return
// at once.
#ifndef TESSEL_SRC_IR_VERIFIER_VERIFIER_VISITOR_H_
#define TESSEL_SRC_IR_VERIFIER_VERIFIER_VISITOR_H_

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "src/ir/arith/interval.h"
#include "src/ir/let.h"
#include "src/ir/program.h"
#include "src/ir/visitor.h"

namespace tessel::ir {

// "[64, 32]".
std::string ShapeText(const std::vector<Expr>& shape);
// "As (shared f16 [64, 32])".
std::string Describe(const Buffer& b);
// Extents equal for sure (constants, or the same expression).
bool ProvablyEqual(const Expr& a, const Expr& b);

class Verifier : public IRVisitor {
 public:
  absl::Status Run(const Program& p);

  void VisitStmt(const Stmt& s) override;
  void VisitBuffer(const Buffer& b) override;
  // statements.cc
  void Visit(const VarNode* op) override;
  void Visit(const LoadNode* op) override;
  void Visit(const KernelNode* op) override;
  void Visit(const ForNode* op) override;
  void Visit(const IfThenElseNode* op) override;
  void Visit(const StoreNode* op) override;
  void Visit(const AllocateNode* op) override;
  void Visit(const AnnotateLayoutNode* op) override;
  void Visit(const UseSwizzleNode* op) override;
  void Visit(const PrintNode* op) override;
  void Visit(const EvaluateNode* op) override;
  void Visit(const SeqNode* op) override;
  // tile_ops.cc
  void Visit(const CopyNode* op) override;
  void Visit(const GemmNode* op) override;
  void Visit(const FillNode* op) override;
  void Visit(const ReduceNode* op) override;
  void Visit(const CumsumNode* op) override;
  void Visit(const AtomicNode* op) override;
  // barriers.cc
  void Visit(const SyncThreadsNode* op) override;
  void Visit(const MbarrierInitNode* op) override;
  void Visit(const MbarrierArriveNode* op) override;
  void Visit(const MbarrierExpectTxNode* op) override;
  void Visit(const MbarrierWaitParityNode* op) override;

 private:
  // Records the first error, prefixed with the op's file:line and name.
  void Fail(const std::string& message);
  void Bind(const Var& v, std::optional<arith::Interval> range);
  void Unbind(const Var& v);
  static std::string OpName(const Stmt& s);
  // A let's checks; its variable stays bound when `bind` (the caller, a
  // statement list, unbinds it at the list's end).
  void VisitLet(const LetParts& let, bool bind);
  // T::alloc_uniform: a uniform value, assigned under uniform control.
  void CheckUniformStore(const StoreNode& op);
  // T::atomic_ticket (verifier/ticket.cc): false after a failure.
  bool CheckTicket(const AtomicNode& op);

  bool CheckIndices(const Buffer& b, const std::vector<Expr>& idx,
                    std::string_view what);
  void CheckBounds(const Buffer& b, const std::vector<Expr>& start,
                   const std::vector<Expr>& extent, const std::string& text);
  bool CheckRegion(const Region& r, std::string_view role);
  bool SameExtents(const Region& a, const Region& b);
  std::string RegionWithExtents(const Region& r);
  bool NeedKernel();
  bool NotInParallel();
  std::optional<std::pair<Expr, Expr>> Matrix(const Region& r,
                                              const char* name);
  void CheckBarrier(const Buffer& b, const Expr& index);

  absl::Status status_;
  SourceLoc loc_;
  std::string op_ = "program";
  int kernel_depth_ = 0;
  int parallel_depth_ = 0;
  std::unordered_map<const VarNode*, int> live_vars_;
  std::unordered_set<const VarNode*> parallel_vars_;
  // The outermost If / loop around the current statement whose control
  // differs between threads ("" outside any).
  struct DivergentControl {
    SourceLoc loc;
    std::string why;
  };
  DivergentControl divergent_;
  arith::VarRanges ranges_;
  std::unordered_map<const BufferNode*, int> live_buffers_;
};

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_VERIFIER_VERIFIER_VISITOR_H_
