// T::let: a block-uniform scalar bound for the rest of its scope
// (src/ir/let.h says how the IR and the GPU carry it; the verifier proves
// the value uniform).
#include "src/ir/let.h"
#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "tessel/builder.h"

namespace tessel {

Expr let(const Expr& value, std::string name, SourceLocation loc) {
  dsl::BuilderState* state = dsl::BuilderState::ForOp(loc, "T::let");
  if (state == nullptr || !state->BeginOp(loc, "T::let")) return value;
  ir::Expr v = dsl::Access::ToIr(value);
  if (!v.defined()) {
    state->Error(loc, "T::let", "the value is undefined");
    return value;
  }
  ir::Var var(state->BufferName(std::move(name), "let"), v.dtype());
  state->Append(ir::MakeLet(var, v, loc));
  return dsl::Access::FromIr(ir::Expr(var));
}

}  // namespace tessel
