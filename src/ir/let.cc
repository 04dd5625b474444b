#include "src/ir/let.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/bitcast.h"
#include "src/ir/op.h"
#include "src/ir/substitute.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"

namespace tessel::ir {

Stmt MakeLet(const Var& var, Expr value, SourceLoc loc) {
  return MakeStmt<EvaluateNode>(
      Call(DataType::kI32, kLetName, {Expr(var), std::move(value)}), loc);
}

std::optional<LetParts> AsLet(const Stmt& s) {
  const auto* e = s.As<EvaluateNode>();
  return e != nullptr ? AsLetCall(e->value) : std::nullopt;
}

std::optional<LetParts> AsLetCall(const Expr& call) {
  const auto* c = call.As<CallNode>();
  if (c == nullptr || c->name != kLetName || c->args.size() != 2)
    return std::nullopt;
  const auto* v = c->args[0].As<VarNode>();
  if (v == nullptr) return std::nullopt;
  return LetParts{v, c->args[1]};
}

LetValues CollectLets(const Stmt& s) {
  LetValues lets;
  // Pre-order: a let's value can only read lets bound before it.
  ForEachStmt(s, [&](const Stmt& n) {
    if (std::optional<LetParts> l = AsLet(n))
      lets[l->var] = InlineLets(l->value, lets);
  });
  return lets;
}

Expr InlineLets(const Expr& e, const LetValues& lets) {
  if (lets.empty() || !e.defined()) return e;
  return Substitute(e, VarMap(lets.begin(), lets.end()));
}

std::optional<std::string> PerThreadReason(
    const Expr& e, const std::unordered_set<const VarNode*>& per_thread) {
  struct Find : IRVisitor {
    explicit Find(const std::unordered_set<const VarNode*>& v) : vars(v) {}
    void Visit(const VarNode* op) override {
      if (!reason && vars.count(op)) {
        reason = absl::StrCat("it reads ", op->name,
                              ", the index of a Parallel loop (each thread "
                              "runs other iterations)");
      }
    }
    void Visit(const LoadNode* op) override {
      const Scope s = op->buffer->scope;
      if (!reason && s != Scope::kGlobal && s != Scope::kShared &&
          s != Scope::kUniform) {
        reason = absl::StrCat(
            "it reads ", op->buffer->name, " (", ScopeName(s), " ",
            std::string(dtype_name(op->buffer->dtype)),
            "), which is per-thread",
            s == Scope::kFragment
                ? ": a fragment's elements live in different threads' "
                  "registers"
                : "");
      }
      IRVisitor::Visit(op);
    }
    void Visit(const CallNode* op) override {
      if (op->name == kBitcastName) return IRVisitor::Visit(op);
      if (!reason) {
        reason = absl::StrCat("it calls the intrinsic ", op->name,
                              ", whose value may differ between threads");
      }
    }
    const std::unordered_set<const VarNode*>& vars;
    std::optional<std::string> reason;
  } find(per_thread);
  find.VisitExpr(e);
  return find.reason;
}

}  // namespace tessel::ir
