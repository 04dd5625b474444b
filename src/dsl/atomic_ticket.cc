// T::atomic_ticket: an element atomic_add whose old value lands in a shared
// i32 slot (the IR's AtomicNode::prev), copied into a uniform variable that
// the caller reads. The barrier between the slot's write and its reads is
// the barrier planner's; the lowering adds the release / acquire.
#include "absl/strings/str_cat.h"
#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "src/dsl/region.h"
#include "src/ir/op.h"
#include "tessel/builder.h"

namespace tessel {

Expr atomic_ticket(const BufferRef& counter, const Expr& increment,
                   SourceLocation loc) {
  constexpr std::string_view kOp = "atomic_ticket";
  dsl::BuilderState* state = dsl::BuilderState::ForOp(loc, kOp);
  if (state == nullptr || !state->BeginOp(loc, kOp)) return Expr(0);
  const ir::Buffer b = dsl::Access::ToIr(counter.buffer());
  if (!b.defined()) {
    state->Error(loc, kOp, "the counter is an undefined buffer");
    return Expr(0);
  }
  if (b->scope != ir::Scope::kGlobal || b->dtype != DataType::kI32) {
    state->Error(
        loc, kOp,
        absl::StrCat("the counter ", b->name, " (", ir::ScopeName(b->scope),
                     " ", std::string(dtype_name(b->dtype)),
                     ") must be a global i32 tensor: the ticket is an atomic "
                     "on device memory that every block of the grid sees"));
    return Expr(0);
  }
  if (!counter.is_element()) {
    state->Error(loc, kOp,
                 absl::StrCat("the counter ", b->name,
                              " needs one element, like counters(tile)"));
    return Expr(0);
  }
  absl::StatusOr<std::vector<ir::Expr>> idx = dsl::ElementIndices(counter);
  if (!idx.ok()) {
    state->Error(loc, kOp, std::string(idx.status().message()));
    return Expr(0);
  }
  ir::Expr inc = dsl::Access::ToIr(increment);
  if (!inc.defined() || !is_int(inc.dtype())) {
    state->Error(loc, kOp, "the increment must be an integer expression");
    return Expr(0);
  }
  Buffer slot =
      alloc_shared({1}, DataType::kI32, b->name + "_ticket_slot", loc);
  ScalarVar ticket = alloc_uniform(DataType::kI32, b->name + "_ticket", loc);
  const ir::Buffer s = dsl::Access::ToIr(slot);
  std::vector<ir::Expr> ones(idx->size(), ir::IntImm(DataType::kI32, 1));
  state->Append(ir::MakeStmt<ir::AtomicNode>(
      ir::AtomicOp::kAdd, ir::Region{b, *idx, ones}, std::nullopt,
      ir::Cast(DataType::kI32, inc),
      ir::Region{
          s, {ir::IntImm(DataType::kI32, 0)}, {ir::IntImm(DataType::kI32, 1)}},
      loc));
  ticket = ScalarVar::Assigned(slot(Index(0, loc)), loc);
  return ticket;
}

}  // namespace tessel
