// When each shared tile and mbarrier array is live, for the shared memory
// plan (plan_shared_memory.h): the leaf statements numbered in program
// order, each buffer's first and last use among them.
//
//   SharedLiveness lv(/*iteration_local=*/false, tma_destinations);
//   lv.VisitStmt(state.program.body);
//   lv.live.at(As.get()).first;   // the statement that first uses As
#ifndef TESSEL_SRC_PASSES_SHARED_LIVENESS_H_
#define TESSEL_SRC_PASSES_SHARED_LIVENESS_H_

#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/ir/visitor.h"

namespace tessel::passes {

// A buffer's bytes, alignment and the statements [first, last] it is live.
struct SharedLifetime {
  const ir::BufferNode* buffer;
  int64_t bytes;
  int64_t align;
  int first = -1, last = -1;
};

// Numbers the leaf statements in program order and records, per buffer,
// the first and last use, widened to enclosing loops the buffer outlives.
// With iteration_local, only when a value may cross iterations: unless each
// iteration starts by overwriting the whole buffer (a copy or fill of all of
// it, not under a condition or an inner loop), what one iteration leaves may be
// read by the next. Buffers used only within an iteration may then share bytes;
// the barrier planner sees the sharing (SharedPlan::MayAlias) and orders the
// next iteration's writes after this one's reads.
// tma_destinations start on 1 KB (TMA swizzles by address bits);
// whole_scope buffers are live over their whole allocation (staging tiles
// only the lowering writes, epilogue_store.h).
class SharedLiveness : public ir::IRVisitor {
 public:
  SharedLiveness(bool iteration_local,
                 std::unordered_set<const ir::BufferNode*> tma_destinations,
                 std::unordered_set<const ir::BufferNode*> whole_scope = {})
      : iteration_local_(iteration_local),
        tma_destinations_(std::move(tma_destinations)),
        whole_scope_(std::move(whole_scope)) {}

  std::map<const ir::BufferNode*, SharedLifetime> live;
  std::vector<const ir::BufferNode*> order;

  void VisitStmt(const ir::Stmt& s) override;

 private:
  struct Loop {
    int start;
    std::vector<const ir::BufferNode*> used;
    // Per buffer: whether its first use in the body overwrites all of it.
    std::unordered_map<const ir::BufferNode*, bool> overwritten_first;
    int conditional;  // conditional_ at the loop
  };

  // Statement s (nullptr: an inner loop) uses b inside the innermost loop.
  void Use(const ir::BufferNode* b, const ir::Stmt* s);
  // A copy into, or fill of, the whole of b that does not read b.
  static bool OverwritesAll(const ir::Stmt& s, const ir::BufferNode* b);

  bool iteration_local_;
  std::unordered_set<const ir::BufferNode*> tma_destinations_;
  std::unordered_set<const ir::BufferNode*> whole_scope_;
  int conditional_ = 0;
  std::vector<Loop> loops_;
  std::unordered_map<const ir::BufferNode*, int> alloc_depth_;
  int counter_ = 0;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_SHARED_LIVENESS_H_
