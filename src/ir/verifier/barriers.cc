// __syncthreads and the mbarrier ops: inside the kernel, on barrier
// arrays, elements inside them, arrive counts within the hardware's.
#include "src/ir/verifier/verifier_visitor.h"

#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel::ir {
void Verifier::Visit(const SyncThreadsNode* op) {
  if (NeedKernel()) NotInParallel();
}

void Verifier::Visit(const MbarrierInitNode* op) {
  if (!NeedKernel() || !NotInParallel()) return;
  IRVisitor::Visit(op);
  CheckBarrier(op->barriers, IntImm(DataType::kI32, 0));
  if (status_.ok() &&
      !IsConstInt(op->barriers->shape[0],
                  static_cast<int64_t>(op->arrive_counts.size()))) {
    Fail(absl::StrCat(Describe(op->barriers), " gets ",
                      op->arrive_counts.size(), " arrive counts"));
  }
  for (const Expr& e : op->arrive_counts) {
    if (!status_.ok()) return;
    std::optional<int64_t> c = e.defined() ? AsConstInt(e) : std::nullopt;
    if (!e.defined() || !is_int(e.dtype())) {
      Fail("arrive counts are integers");
    } else if (c && (*c < 1 || *c > kMaxMbarrierArriveCount)) {
      Fail(absl::StrCat("arrive count ", *c,
                        " is out of range; an mbarrier expects 1 to ",
                        kMaxMbarrierArriveCount, " arrivals"));
    }
  }
}

void Verifier::Visit(const MbarrierArriveNode* op) {
  if (!NeedKernel()) return;
  IRVisitor::Visit(op);
  if (status_.ok()) CheckBarrier(op->barriers, op->index);
}

void Verifier::Visit(const MbarrierExpectTxNode* op) {
  if (!NeedKernel()) return;
  IRVisitor::Visit(op);
  if (status_.ok()) CheckBarrier(op->barriers, op->index);
}

void Verifier::Visit(const MbarrierWaitParityNode* op) {
  if (!NeedKernel()) return;
  IRVisitor::Visit(op);
  if (status_.ok()) CheckBarrier(op->barriers, op->index);
}

}  // namespace tessel::ir
