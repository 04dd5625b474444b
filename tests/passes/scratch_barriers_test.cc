// The row reduces across warps leave their scratch read after their one
// barrier (LeavesScratchOpen): the barrier planner, not the lowering, puts
// a barrier before the scratch's next writer. Two reduces in a row take
// turns between two slots and need none between them; a third one, or a
// reduce in a loop, writes a slot whose readers may still run, and gets one.
// Each test counts the barriers in the lowered code and checks where the
// planner's own ones are.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "tessel/tessel.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

namespace T = tessel;

// A block of 256 threads over one row of 2048 columns: 8 warps a row, so
// every reduce goes through shared memory. `body(x, r, c, bx)` records the
// reduces of one chunk of x into r[0..2] (c: a tile like x); `chunks` column
// chunks in a serial loop.
using Body =
    std::function<void(const T::Buffer& x, const std::vector<T::Buffer>& r,
                       const T::Buffer& c, const T::Expr& bx)>;

Program RowProgram(int chunks, const Body& body) {
  T::ProgramBuilder p("scratch_barriers");
  auto X = p.tensor("X", {64, 2048 * chunks}, DataType::kF16);
  auto R = p.tensor("R", {64}, DataType::kF32);
  {
    T::Kernel kernel(64, {.threads = 256});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({1, 2048}, DataType::kF32, "x");
    auto c = T::alloc_fragment({1, 2048}, DataType::kF32, "c");
    std::vector<T::Buffer> r;
    for (const char* n : {"a", "b", "c"}) {
      r.push_back(T::alloc_fragment({1}, DataType::kF32, n));
      T::clear(r.back());
    }
    for (auto j : T::Serial(chunks, {.name = "j"})) {
      T::copy(X(bx, j * 2048), x);
      body(x, r, c, bx);
    }
    for (auto i : T::Parallel(1)) r[0](i) = r[0](i) + r[1](i) + r[2](i);
    T::copy(r[0], R(bx));
  }
  absl::StatusOr<Program> out = p.finish();
  EXPECT_TRUE(out.ok()) << out.status();
  return *out;
}

constexpr T::ReduceOptions kAdd{.dim = 1, .clear = false};

int CountSyncs(const ir::Stmt& s) {
  int n = 0;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    n += x->kind == ir::StmtKind::kSyncThreads;
  });
  return n;
}

// The tile-level statements of the chunk loop's body after the planner.
std::vector<ir::StmtKind> LoopKinds(const ir::Stmt& s) {
  std::vector<ir::StmtKind> out;
  bool found = false;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    const auto* f = x.As<ir::ForNode>();
    if (found || f == nullptr || f->for_kind != ir::ForKind::kSerial) return;
    found = true;
    if (const auto* q = f->body.As<ir::SeqNode>())
      for (const ir::Stmt& c : q->stmts) out.push_back(c->kind);
  });
  return out;
}

// Barriers in the lowered code, and the planner's alone.
struct Syncs {
  int lowered = 0, planned = 0;
  std::vector<ir::StmtKind> loop;
  std::string ir;
};

Syncs Count(const Program& p) {
  LoweringState planned = RunPasses(p.ir(), "insert_barriers");
  LoweringState lowered = RunPasses(p.ir(), "lower_tile_ops");
  return {CountSyncs(lowered.program.body), CountSyncs(planned.program.body),
          LoopKinds(planned.program.body), ir::ToString(planned.program)};
}

using K = ir::StmtKind;

TEST(ScratchBarriers, TwoReducesInARowTakeTwoSlots) {
  Syncs s = Count(RowProgram(1, [](auto& x, auto& r, auto&, auto&) {
    T::reduce_sum(x, r[0], kAdd);
    T::reduce_max(x, r[1], kAdd);
  }));
  EXPECT_EQ(s.planned, 0) << s.ir;  // a loop of one chunk: no back edge
  EXPECT_EQ(s.lowered, 2) << s.ir;  // one inside each reduce
}

TEST(ScratchBarriers, ReducesInARowNeedNoBarrierBetween) {
  // The third writes slot 0 again, but the second one's barrier came after
  // every thread's reads of the first.
  Syncs s = Count(RowProgram(1, [](auto& x, auto& r, auto&, auto&) {
    T::reduce_sum(x, r[0], kAdd);
    T::reduce_max(x, r[1], kAdd);
    T::reduce_min(x, r[2], kAdd);
  }));
  EXPECT_EQ(s.planned, 0) << s.ir;
  EXPECT_EQ(s.lowered, 3) << s.ir;
}

TEST(ScratchBarriers, ReduceAfterAConditionalOneWaitsForItsSlotsReaders) {
  // When the middle reduce does not run, nothing orders the first one's
  // readers before the third one's writes to the same slot.
  Syncs s = Count(RowProgram(1, [](auto& x, auto& r, auto&, auto& bx) {
    T::reduce_sum(x, r[0], kAdd);
    T::If(bx < 32, [&] { T::reduce_max(x, r[1], kAdd); });
    T::reduce_min(x, r[2], kAdd);
  }));
  EXPECT_EQ(s.planned, 1) << s.ir;
  EXPECT_EQ(s.lowered, 4) << s.ir;
  EXPECT_EQ(s.loop, (std::vector<K>{K::kCopy, K::kReduce, K::kIfThenElse,
                                    K::kSyncThreads, K::kReduce}))
      << s.ir;
}

TEST(ScratchBarriers, OddReducesInALoopWaitAtTheTop) {
  // Slots 0, 1, 0: the next iteration's first reduce writes the slot the
  // last one reads.
  Syncs s = Count(RowProgram(4, [](auto& x, auto& r, auto&, auto&) {
    T::reduce_sum(x, r[0], kAdd);
    T::reduce_max(x, r[1], kAdd);
    T::reduce_min(x, r[2], kAdd);
  }));
  EXPECT_EQ(s.planned, 1) << s.ir;
  EXPECT_EQ(s.lowered, 4) << s.ir;
  EXPECT_EQ(s.loop.front(), K::kSyncThreads) << s.ir;
}

TEST(ScratchBarriers, ReduceInALoopWaitsForTheLastIterationsReaders) {
  // Iteration j + 1 writes the slot that iteration j's threads still read.
  Syncs s = Count(RowProgram(
      4, [](auto& x, auto& r, auto&, auto&) { T::reduce_sum(x, r[0], kAdd); }));
  EXPECT_EQ(s.planned, 1) << s.ir;
  EXPECT_EQ(s.lowered, 2) << s.ir;
  EXPECT_EQ(s.loop, (std::vector<K>{K::kSyncThreads, K::kCopy, K::kReduce}))
      << s.ir;
}

TEST(ScratchBarriers, TwoReducesInALoopNeedNoBarrierAcrossIterations) {
  // The second reduce's barrier orders the first slot's readers before the
  // next iteration's first reduce.
  Syncs s = Count(RowProgram(4, [](auto& x, auto& r, auto&, auto&) {
    T::reduce_sum(x, r[0], kAdd);
    T::reduce_max(x, r[1], kAdd);
  }));
  EXPECT_EQ(s.planned, 0) << s.ir;
  EXPECT_EQ(s.lowered, 2) << s.ir;
}

TEST(ScratchBarriers, SlotsAreDisjointFromEachOtherAndFromClosedScratch) {
  // reduce (slot 0), reduce (slot 1), a cumsum staged in the closed part.
  Program p = RowProgram(1, [](auto& x, auto& r, auto& c, auto&) {
    T::reduce_sum(x, r[0], kAdd);
    T::reduce_max(x, r[1], kAdd);
    T::cumsum(x, c, {.dim = 1});
    T::reduce_sum(c, r[2], kAdd);
  });
  LoweringState st = RunPasses(p.ir(), "insert_barriers");
  const SharedPlan& plan = st.smem;
  ASSERT_EQ(plan.scratch.size(), 4u);
  const ir::BufferNode* slot0 = plan.scratch[0].second.get();
  const ir::BufferNode* slot1 = plan.scratch[1].second.get();
  const ir::BufferNode* closed = plan.scratch[2].second.get();
  const ir::BufferNode* slot0_again = plan.scratch[3].second.get();
  EXPECT_FALSE(plan.MayAlias(slot0, slot1));
  EXPECT_FALSE(plan.MayAlias(slot0, closed));
  EXPECT_FALSE(plan.MayAlias(slot1, closed));
  EXPECT_TRUE(plan.MayAlias(slot0, slot0_again));
  // The cumsum stages in bytes no reduce reads, and the last reduce's slot
  // was last read before the second reduce's barrier: the planner adds none.
  Syncs s = Count(p);
  EXPECT_EQ(s.planned, 0) << s.ir;
  EXPECT_EQ(s.lowered, 2 + 3 + 1) << s.ir;  // the cumsum stages, scans, reads
}

}  // namespace
}  // namespace tessel::passes
