// T::bitcast: the same bits read as another dtype of their width; the
// width and the pair of dtypes are checked here, at the user's line.
#include "src/ir/bitcast.h"

#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "tessel/builder.h"

namespace tessel {

Expr bitcast(const Expr& value, DataType dtype, SourceLocation loc) {
  dsl::BuilderState* state = dsl::BuilderState::ForOp(loc, "T::bitcast");
  if (state == nullptr || !state->BeginOp(loc, "T::bitcast")) return value;
  ir::Expr v = dsl::Access::ToIr(value);
  if (!v.defined()) {
    state->Error(loc, "T::bitcast", "the value is undefined");
    return value;
  }
  if (std::optional<std::string> why = ir::BitcastRefusal(v.dtype(), dtype)) {
    state->Error(loc, "T::bitcast", *why);
    return value;
  }
  if (v.dtype() == dtype) return value;
  return dsl::Access::FromIr(ir::MakeBitcast(v, dtype));
}

}  // namespace tessel
