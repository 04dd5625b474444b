// T.print of a scalar: printed once per block, by thread 0. T.print of a
// buffer: one line per element, "<message>: <buffer>[<flat index>] = <v>",
// a fragment's elements by the threads that hold them (one replica each),
// any other buffer's by thread 0 (the interpreter prints the same values,
// on one line per buffer).
#include "src/passes/lower/lowerer.h"

#include "absl/strings/str_cat.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::Visit(const ir::PrintNode* op) {
  if (!op->buffer.defined()) {
    return MakeIf(
        Expr(tx_) == 0,
        Intrin(Intrinsic::kPrint, {Tag(op->message), MutateExpr(op->value)}));
  }
  const ir::Buffer& b = op->buffer;
  auto shape = ConstShape(b->shape);
  if (!shape) {
    Fail(op, "T.print of a buffer with a symbolic shape");
    return Self(op);
  }
  std::vector<Expr> extents;
  for (int64_t d : *shape) extents.push_back(Expr(int(d)));
  const std::string tag = absl::StrCat(op->message, ": ", b->name);
  auto print = [&](const std::vector<Expr>& logical, Expr value) {
    return Intrin(Intrinsic::kPrint,
                  {Tag(tag), FlatIndex(extents, logical), std::move(value)});
  };
  if (b->scope == ir::Scope::kFragment) {
    const FragmentLayout& l = Layout(b);
    ir::Buffer local = Local(b);
    return ForEachLocal(
        b, [&](const std::vector<Expr>& li, const std::vector<Expr>& logical) {
          return Guard(l.Leader(tx_), print(logical, ir::Load(local, li)));
        });
  }
  std::vector<ir::Var> vars;
  std::vector<Expr> idx;
  for (size_t d = 0; d < shape->size(); ++d) {
    vars.emplace_back(absl::StrCat("p", d, "_", b->name));
    idx.push_back(vars.back());
  }
  Stmt body = print(idx, Load(b, idx));
  for (int d = static_cast<int>(shape->size()) - 1; d >= 0; --d)
    body = MakeFor(vars[d], 0, extents[d], ir::ForKind::kSerial, body);
  return MakeIf(Expr(tx_) == 0, body);
}

}  // namespace tessel::passes::lower
