#include "src/ir/substitute.h"

#include "src/ir/op.h"
#include "src/ir/visitor.h"

namespace tessel::ir {
namespace {

class VarSubst : public IRMutator {
 public:
  explicit VarSubst(const VarMap& map) : map_(map) {}
  Expr Visit(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? Self(op) : it->second;
  }
  // Rebuild derived nodes through the folding constructors, so that
  // substituted constants simplify ((k + 1) % 3 with k = 2 -> 0).
  Expr Visit(const BinaryNode* op) override {
    Expr a = MutateExpr(op->a), b = MutateExpr(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return Self(op);
    return Binary(op->op, a, b);
  }

 private:
  const VarMap& map_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& map) {
  if (map.empty() || !e.defined()) return e;
  return VarSubst(map).MutateExpr(e);
}

Stmt Substitute(const Stmt& s, const VarMap& map) {
  if (map.empty() || !s.defined()) return s;
  return VarSubst(map).MutateStmt(s);
}

}  // namespace tessel::ir
