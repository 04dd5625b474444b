// Two copies into one shared tile need a barrier between them only when
// their regions may overlap: a paged gather's copies into rows [0, 16),
// [16, 32), ... of one tile (samples/decode_attention.cc) take none, so
// they stay one run of cp.async copies before one commit.
#include <gtest/gtest.h>

#include <string>

#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "tessel/tessel.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

namespace T = tessel;

// Rows [row0, row0 + 16) and [row1, row1 + 16) of the tile from X, then a
// read of the whole tile.
Program TwoCopies(int row0, int row1) {
  T::ProgramBuilder p("region_barriers");
  auto X = p.tensor("X", {64, 64}, DataType::kF16);
  auto Y = p.tensor("Y", {32, 64}, DataType::kF16);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto s = T::alloc_shared({32, 64}, DataType::kF16, "s");
    T::copy(X(0, 0), s(T::slice(row0, row0 + 16), T::all));
    T::copy(X(16, 0), s(T::slice(row1, row1 + 16), T::all));
    T::copy(s, Y(0, 0));
  }
  absl::StatusOr<Program> out = p.finish();
  EXPECT_TRUE(out.ok()) << out.status();
  return *out;
}

int CountSyncs(const ir::Stmt& s) {
  int n = 0;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    n += x->kind == ir::StmtKind::kSyncThreads;
  });
  return n;
}

TEST(RegionBarriers, DisjointRowsOfOneTileNeedNoBarrierBetween) {
  LoweringState st = RunPasses(TwoCopies(0, 16).ir(), "insert_barriers");
  // One, before the tile is read back.
  EXPECT_EQ(CountSyncs(st.program.body), 1) << ir::ToString(st.program);
}

TEST(RegionBarriers, OverlappingRowsKeepTheBarrier) {
  LoweringState st = RunPasses(TwoCopies(0, 8).ir(), "insert_barriers");
  EXPECT_EQ(CountSyncs(st.program.body), 2) << ir::ToString(st.program);
}

}  // namespace
}  // namespace tessel::passes
