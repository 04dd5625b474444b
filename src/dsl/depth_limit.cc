#include "src/dsl/depth_limit.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"

namespace tessel::dsl {
namespace {

class DepthCheck : public ir::IRVisitor {
 public:
  const absl::Status& status() const { return status_; }

  // Tensor shapes sit outside every statement.
  void CheckShape(const ir::Buffer& b, const ir::SourceLoc& loc) {
    at_ = nullptr;
    loc_ = loc;
    what_ = absl::StrCat("the shape of ", b->name);
    for (const ir::Expr& d : b->shape) VisitExpr(d);
  }

  void VisitStmt(const ir::Stmt& s) override {
    if (!status_.ok() || !s.defined()) return;
    if (stmt_depth_ >= kMaxStmtDepth) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat(ir::FormatLoc(s->loc), ": statements nested more than ",
                       kMaxStmtDepth,
                       " deep (loops, ifs and allocations, each holding "
                       "the rest of its scope); tessel takes at most ",
                       kMaxStmtDepth));
      return;
    }
    const ir::StmtNode* outer = at_;
    at_ = s.get();
    ++stmt_depth_;
    IRVisitor::VisitStmt(s);
    --stmt_depth_;
    at_ = outer;
  }

  void VisitExpr(const ir::Expr& e) override {
    if (!status_.ok() || !e.defined()) return;
    // A node shared by several parents is walked again only when reached
    // deeper than before: linear in the DAG, not in the tree it unfolds to.
    int& deepest = deepest_[e.get()];
    if (deepest > expr_depth_) return;
    deepest = expr_depth_ + 1;
    if (expr_depth_ >= kMaxExprDepth) {
      status_ = absl::InvalidArgumentError(absl::StrCat(
          at_ != nullptr ? ir::FormatLoc(at_->loc) : ir::FormatLoc(loc_), ": ",
          at_ != nullptr ? "an expression of this statement"
                         : std::string(what_),
          " is nested more than ", kMaxExprDepth,
          " operators deep; tessel takes at most ", kMaxExprDepth,
          " (keep partial results in a T::alloc_var or a fragment)"));
      return;
    }
    ++expr_depth_;
    IRVisitor::VisitExpr(e);
    --expr_depth_;
  }

 private:
  absl::Status status_;
  int stmt_depth_ = 0;
  int expr_depth_ = 0;
  const ir::StmtNode* at_ = nullptr;
  ir::SourceLoc loc_;
  std::string what_;
  absl::flat_hash_map<const ir::ExprNode*, int> deepest_;
};

}  // namespace

absl::Status CheckDepth(const ir::Program& program,
                        const ir::SourceLoc& builder_loc) {
  DepthCheck check;
  for (const ir::Buffer& b : program.params) check.CheckShape(b, builder_loc);
  check.VisitStmt(program.body);
  return check.status();
}

}  // namespace tessel::dsl
