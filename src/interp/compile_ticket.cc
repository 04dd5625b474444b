// T::atomic_ticket in the interpreter: the block adds the increment to the
// counter at once (a ticket is never deferred) and writes the old value
// into its shared slot. Programs with tickets run their blocks one at a
// time, in BlockOrder's scrambled order (interpreter.cc), so the block that
// draws a tile's last ticket sees every partial the earlier blocks wrote,
// and a kernel that assumed some block index is last fails its check.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/compiler.h"
#include "src/interp/numeric.h"
#include "src/interp/status_macros.h"
#include "src/interp/tile_ops.h"

namespace tessel::interp {
namespace {

void RunTicket(Frame& f, const Site& site, const Box& counter, int64_t inc,
               const Box& slot) {
  BufferInstance& c = *counter.buffer;
  int64_t flat = 0;
  for (size_t k = 0; k < counter.start.size(); ++k) {
    if (counter.start[k] < 0 || counter.start[k] >= c.shape[k]) {
      Fail(f, site, absl::StatusCode::kOutOfRange,
           absl::StrCat("counter element ", ElementName(c, counter.start),
                        " is outside ", c.node->name, "[",
                        absl::StrJoin(c.shape, ", "), "]",
                        " (on the GPU the ticket would read 0)"));
      return;
    }
    flat += counter.start[k] * c.strides[k];
  }
  BufferInstance& s = *slot.buffer;
  if (!CheckBox(f, site, slot, "ticket slot")) return;
  const int64_t old = c.GetInt(flat);
  c.SetInt(flat, old + inc);
  int64_t sf = 0;
  for (size_t k = 0; k < slot.start.size(); ++k)
    sf += slot.start[k] * s.strides[k];
  s.SetInt(sf, old);
}

}  // namespace

absl::StatusOr<StmtFn> Compiler::Ticket(const ir::AtomicNode* op) {
  site_.op = "atomic_ticket";
  if (op->dst.buffer->scope != ir::Scope::kGlobal ||
      op->dst.buffer->dtype != DataType::kI32 || op->src ||
      op->prev->buffer->dtype != DataType::kI32) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("a ticket needs a global i32 counter and a "
                              "shared i32 slot ('",
                              op->dst.buffer->name, "')"));
  }
  if (parallel_depth_ > 0) {
    return Error(absl::StatusCode::kInvalidArgument,
                 "a ticket inside a Parallel loop");
  }
  INTERP_ASSIGN_OR_RETURN(CompiledRegion counter, Region(op->dst));
  INTERP_ASSIGN_OR_RETURN(CompiledRegion slot, Region(*op->prev));
  INTERP_ASSIGN_OR_RETURN(IntFn inc, Int(op->value));
  globals_accessed_.insert(counter.slot);
  exe_->takes_tickets = true;
  const Site site = site_;
  return StmtFn([site, counter = std::move(counter), slot = std::move(slot),
                 inc = std::move(inc)](Frame& f) {
    const int64_t v = inc(f);
    Box c, s;
    if (!EvalBox(f, counter, &c) || !EvalBox(f, slot, &s)) return;
    RunTicket(f, site, c, v, s);
  });
}

}  // namespace tessel::interp
