#include "src/passes/warp_specialize_producer_lets.h"

#include "src/ir/arith/equal.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

// The variables e names, in the order the visitor meets them, once each.
std::vector<const ir::VarNode*> VarsOf(const ir::Expr& e) {
  struct Collect : ir::IRVisitor {
    void Visit(const ir::VarNode* op) override {
      if (seen.insert(op).second) vars.push_back(op);
    }
    std::unordered_set<const ir::VarNode*> seen;
    std::vector<const ir::VarNode*> vars;
  } collect;
  collect.VisitExpr(e);
  return collect.vars;
}

}  // namespace

ProducerLets::ProducerLets(const ir::Stmt& kernel_body,
                           const std::unordered_set<const ir::VarNode*>& outer)
    : body_(kernel_body) {
  // Pre-order: a let's value reads only lets bound before it.
  ir::ForEachStmt(kernel_body, [&](const ir::Stmt& s) {
    std::optional<ir::LetParts> let = ir::AsLet(s);
    if (let && outer.count(let->var) == 0)
      inner_[let->var] = ir::InlineLets(let->value, inner_);
  });
}

ir::Expr ProducerLets::Inline(const ir::Expr& e) const {
  return ir::InlineLets(e, inner_);
}

ir::Expr ProducerLets::Bind(const ir::Expr& e, const ir::VarMap& loop,
                            const ir::VarNode* producer_var) {
  ir::VarMap map = loop;
  for (const ir::VarNode* v : VarsOf(e)) {
    auto let = inner_.find(v);
    if (let == inner_.end()) continue;
    if (auto b = bound_.find(v); b != bound_.end()) {
      map.emplace(v, b->second);
      continue;
    }
    ir::Expr value = ir::Substitute(let->second, loop);
    if (!ReadsOnlyUnwrittenGlobals({value}, body_)) {
      map.emplace(v, value);  // read after the wait, as the consumers do
      continue;
    }
    // Two lets of one value (the key and value gathers' page rows) share
    // a binding.
    ir::Expr same;
    for (const auto& [expr, var] : values_)
      if (ir::ExprDeepEqual(expr, value)) same = var;
    if (!same.defined()) {
      ir::Var var(v->name, v->dtype);
      same = ir::Expr(var);
      values_.emplace_back(value, same);
      (UsesVar(value, producer_var) ? ahead_wait_ : ahead_loop_)
          .push_back(Let(var, value));
    }
    bound_.emplace(v, same);
    map.emplace(v, same);
  }
  return ir::Substitute(e, map);
}

}  // namespace tessel::passes
