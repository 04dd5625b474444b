// samples/grouped_gemm beyond the shared sample cases: the interpreter
// against float64 at ragged group sizes (0, 1, a tile, a tile and 1, rows of
// no group after them), both B layouts and bf16; a store past a group's
// end caught by the check; the slot bound; bad configs refused; and what the
// scheduler makes of the kernel on sm_90a (TMA producer, wgmma) and sm_80.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "samples/execute.h"
#include "samples/grouped_gemm.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

GroupedGemmConfig Small(int N, int K, bool k_major = true,
                        DataType dtype = f16) {
  return {.N = N,
          .K = K,
          .in_dtype = dtype,
          .b_k_major = k_major,
          .tile = {.block_m = 64,
                   .block_n = 64,
                   .block_k = 32,
                   .num_stages = 2,
                   .threads = 128}};
}

CheckResult RunOnInterpreter(Workload& w) {
  absl::StatusOr<RunResult> run = Execute(w, {.backend = Backend::kCpu});
  EXPECT_TRUE(run.ok()) << run.status();
  absl::StatusOr<CheckResult> check = CheckOutputs(w);
  EXPECT_TRUE(check.ok()) << check.status();
  return check.ok() ? *check : CheckResult{};
}

TEST(GroupedGemm, MatchesFloat64AtRaggedGroups) {
  struct Case {
    GroupedGemmConfig c;
    std::vector<int> rows;
    int pad;
  };
  const std::vector<Case> cases = {
      {Small(80, 72), {0, 1, 64, 0, 0, 65, 130, 3, 0}, 5},
      {Small(130, 40, /*k_major=*/false), {63, 0, 129, 1}, 0},
      {Small(64, 96, true, bf16), {0, 0, 200}, 2},
      {Small(48, 64), {7}, 0},
      {Small(64, 64), RaggedGroupRows(24, 30, true, 5), 1},
  };
  for (const Case& k : cases) {
    absl::StatusOr<Workload> w = GroupedGemmWorkload(k.c, k.rows, 7, k.pad);
    ASSERT_TRUE(w.ok()) << w.status();
    SCOPED_TRACE(w->shape);
    CheckResult check = RunOnInterpreter(*w);
    EXPECT_TRUE(check.ok) << check.report;
  }
}

TEST(GroupedGemm, CheckCatchesRowsOfTheNextGroup) {
  // The same kernel, but C starts at a value the reference does not hold
  // in one row of the second group: a kernel that skipped that row, or the
  // reference missing it, fails. And rows of no group must keep the
  // sentinel: overwrite one after the run and the check fails.
  absl::StatusOr<Workload> w =
      GroupedGemmWorkload(Small(64, 32), {70, 10}, 3, /*pad=*/4);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(RunOnInterpreter(*w).ok);
  HostTensor& c = w->tensors.at("C");
  c.set_flat(80 * 64 + 5, 0.0);  // a pad row, past the last group
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
}

TEST(GroupedGemm, SlotsCoverEveryGroupsTiles) {
  // sum ceildiv(rows, bm) <= M / bm + G for any sizes; the largest slot a
  // tile takes is offsets[g] / bm + g + ceildiv(rows, bm) - 1.
  for (int seed = 1; seed < 40; ++seed) {
    for (int mean : {1, 17, 64, 200}) {
      std::vector<int> rows = RaggedGroupRows(seed % 9 + 1, mean, true, seed);
      GroupedGemmConfig c = Small(16, 16);
      int64_t offset = 0;
      for (int r : rows) offset += r;
      c.M = static_cast<int>(std::max<int64_t>(offset, 1));
      c.G = static_cast<int>(rows.size());
      int64_t start = 0;
      for (size_t g = 0; g < rows.size(); ++g) {
        const int64_t tiles = (rows[g] + 63) / 64;
        if (tiles > 0)
          EXPECT_LT(start / 64 + int64_t(g) + tiles - 1, GroupedGemmSlots(c));
        start += rows[g];
      }
    }
  }
}

TEST(GroupedGemm, RaggedRowsAreDeterministicAndRagged) {
  // bench/peers.py draws the same sizes: keep the first ones pinned.
  const std::vector<int> rows = RaggedGroupRows(8, 2048, true, 1);
  EXPECT_EQ(rows, RaggedGroupRows(8, 2048, true, 1));
  EXPECT_EQ(rows[1], 0);
  EXPECT_EQ(rows[5], 1);
  for (int r : rows) EXPECT_NE(r % 64 == 0 && r > 0, true) << r;
}

TEST(GroupedGemm, RejectsBadConfigsAndSizes) {
  GroupedGemmConfig c = Small(64, 64);
  c.N = 0, c.G = 2;
  EXPECT_THAT(std::string(GroupedGemmProgram(c).status().message()),
              HasSubstr("sizes must be positive"));
  c = Small(64, 64);
  c.in_dtype = f32;
  EXPECT_THAT(std::string(GroupedGemmWorkload(c, {3}).status().message()),
              HasSubstr("inputs must be f16 or bf16"));
  EXPECT_THAT(std::string(ParseGroupRows("1,-2").status().message()),
              HasSubstr("sizes >= 0"));
  EXPECT_THAT(
      std::string(GroupedGemmWorkload(Small(8, 8), {0, 0}).status().message()),
      HasSubstr("rows must be between 1"));
}

std::string Schedule(const GroupedGemmConfig& c, const Target& target) {
  absl::StatusOr<Program> p = GroupedGemmProgram(c);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = target});
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return "";
  std::string s;
  for (const std::string& line : k->schedule()) s += line + "\n";
  return s;
}

TEST(GroupedGemm, Sm90aTakesTmaProducerAndWgmma) {
  for (bool k_major : {true, false}) {
    GroupedGemmConfig c{.M = 8192,
                        .N = 4096,
                        .K = 4096,
                        .G = 64,
                        .b_k_major = k_major,
                        .tile = GroupedGemmTile(90)};
    const std::string s = Schedule(c, Target::sm90a());
    SCOPED_TRACE(s);
    EXPECT_THAT(s, HasSubstr("wgmma"));
    EXPECT_THAT(s, HasSubstr("warp-specialized"));
    EXPECT_THAT(s, Not(HasSubstr("declined")));
  }
}

TEST(GroupedGemm, RasterizedPanelsKeepTheTmaProducer) {
  // T::use_swizzle after the allocations: the lets read the rasterized
  // block index (bound ahead of them), and the producer stays.
  GroupedGemmConfig c{
      .N = 4096, .K = 4096, .G = 8, .tile = GroupedGemmTile(90)};
  c.tile.panel = 8;
  const std::string s = Schedule(c, Target::sm90a());
  EXPECT_THAT(s, HasSubstr("warp-specialized")) << s;
  absl::StatusOr<Workload> w =
      GroupedGemmWorkload(Small(64, 40), {0, 70, 1, 130}, 2, 0);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(RunOnInterpreter(*w).ok);
}

TEST(GroupedGemm, Sm80TakesCpAsyncAndMmaSync) {
  GroupedGemmConfig c{
      .M = 4096, .N = 2048, .K = 2048, .G = 8, .tile = GroupedGemmTile(80)};
  const std::string s = Schedule(c, Target::sm80());
  SCOPED_TRACE(s);
  EXPECT_THAT(s, HasSubstr("mma.sync"));
  EXPECT_THAT(s, Not(HasSubstr("warp-specialized")));
}

}  // namespace
}  // namespace tessel::samples
