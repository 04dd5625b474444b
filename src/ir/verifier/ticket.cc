// T::atomic_ticket (an element atomic_add with prev set): once per block,
// on a global i32 counter, under control every thread takes alike, its old
// value into a shared i32 element.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "src/ir/let.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/verifier/verifier_visitor.h"

namespace tessel::ir {

bool Verifier::CheckTicket(const AtomicNode& op) {
  const Buffer& counter = op.dst.buffer;
  if (op.op != AtomicOp::kAdd || op.src) {
    Fail("a ticket adds one value to one counter element");
    return false;
  }
  if (counter->scope != Scope::kGlobal || counter->dtype != DataType::kI32) {
    Fail(absl::StrCat("the counter ", Describe(counter),
                      " must be a global i32 tensor: the ticket is an atomic "
                      "on device memory that every block of the grid sees"));
    return false;
  }
  if (parallel_depth_ > 0) {
    Fail(
        "inside a T::Parallel loop: a ticket is taken once per block, outside "
        "Parallel loops");
    return false;
  }
  if (!divergent_.why.empty()) {
    Fail(absl::StrCat("a ticket is taken inside ", divergent_.why, " at ",
                      FormatLoc(divergent_.loc),
                      "; every thread of the block must reach it"));
    return false;
  }
  for (const Expr& e : op.dst.start) {
    if (std::optional<std::string> why = PerThreadReason(e, parallel_vars_)) {
      Fail(absl::StrCat("the counter index ", ToString(e),
                        " differs between threads: ", *why));
      return false;
    }
  }
  if (op.value.defined()) {
    if (std::optional<std::string> why =
            PerThreadReason(op.value, parallel_vars_)) {
      Fail(absl::StrCat("the increment ", ToString(op.value),
                        " differs between threads: ", *why));
      return false;
    }
  }
  if (!CheckRegion(*op.prev, "prev")) return false;
  const Buffer& slot = op.prev->buffer;
  bool element = true;
  for (const Expr& e : op.prev->extent) element &= IsConstInt(e, 1);
  if (slot->scope != Scope::kShared || slot->dtype != DataType::kI32 ||
      !element) {
    Fail(
        absl::StrCat("the ticket's old value goes to one shared i32 element, "
                     "not ",
                     RegionWithExtents(*op.prev)));
    return false;
  }
  return true;
}

}  // namespace tessel::ir
