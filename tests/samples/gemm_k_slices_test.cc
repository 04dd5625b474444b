// The GEMM sample's K slices (gemm_k_slices.h) and its tile table
// (DefaultGemmTile, gemm_tile.cc), without a GPU. The split workloads' values
// are checked against float64 by the InterpreterTest cases (sample_cases.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/gemm.h"
#include "samples/gemm_k_slices.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

GemmConfig WithSplit(int K, int block_k, int split_k) {
  return {.M = 64,
          .N = 64,
          .K = K,
          .tile = {.block_k = block_k, .split_k = split_k}};
}

TEST(GemmSplitK, SlicesNeverStartPastK) {
  // 10 steps in 4 slices: 3 + 3 + 3 + 1.
  EXPECT_EQ(GemmKStepsPerSlice(WithSplit(640, 64, 4)), 3);
  EXPECT_EQ(GemmKSlices(WithSplit(640, 64, 4)), 4);
  // 5 steps in 4 would be 2 + 2 + 1 + nothing: three slices.
  EXPECT_EQ(GemmKSlices(WithSplit(300, 64, 4)), 3);
  // A ragged last step counts; one step cannot split.
  EXPECT_EQ(GemmKSlices(WithSplit(65, 64, 2)), 2);
  EXPECT_EQ(GemmKSlices(WithSplit(64, 64, 2)), 1);
  EXPECT_EQ(GemmKSlices(WithSplit(4096, 64, 1)), 1);
}

TEST(GemmSplitK, WorkloadRunsTheGemmThenTheReduce) {
  GemmConfig c = WithSplit(600, 64, 3);
  c.M = 70;
  c.N = 50;
  c.bias_relu = true;
  absl::StatusOr<Workload> w = GemmWorkload(c);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->steps.size(), 2u);
  EXPECT_EQ(w->main_step, 0);
  EXPECT_EQ(w->tensors.at("partials").shape(),
            (std::vector<int64_t>{3, 70, 50}));
  EXPECT_EQ(w->steps[0].program.name(), "gemm_NN_split_k");
  EXPECT_EQ(w->steps[1].program.name(), "gemm_split_k_reduce");
  EXPECT_THAT(w->shape, HasSubstr("split_k=3"));
  // Without the reduce, C keeps its zeros: the check must see it.
  w->steps.pop_back();
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
}

TEST(GemmSplitK, ReduceRefusesOneSlice) {
  EXPECT_THAT(GemmSplitKReduceProgram(WithSplit(64, 64, 4)).status().message(),
              HasSubstr("two or more slices"));
  EXPECT_FALSE(KernelRegistry::Global()
                   .Build("gemm_split_k_reduce", {{"M", 64},
                                                  {"N", 64},
                                                  {"K", 64},
                                                  {"split_k", 1},
                                                  {"block_k", 64}})
                   .ok());
  EXPECT_TRUE(KernelRegistry::Global()
                  .Build("gemm_split_k_reduce", {{"M", 64},
                                                 {"N", 64},
                                                 {"K", 640},
                                                 {"split_k", 2},
                                                 {"block_k", 64},
                                                 {"bias_relu", true}})
                  .ok());
  EXPECT_TRUE(
      KernelRegistry::Global()
          .Build("gemm", {{"M", 64}, {"N", 64}, {"K", 640}, {"split_k", 2}})
          .ok());
}

struct TileCase {
  int64_t M, N, K;
  int block_m, block_n, stages, split_k;
};

TEST(DefaultGemmTile, Sm90TableByWaves) {
  const TileCase cases[] = {
      // At least one wave of 128x256 tiles: the large tile.
      {8192, 8192, 8192, 128, 256, 4, 1},
      {4096, 4096, 1024, 128, 256, 4, 1},
      // Ragged in M and N, TMA-able in every layout: 256x128 tiles.
      {3000, 5000, 4000, 256, 128, 4, 1},
      // Odd sizes (no TMA) or a tile multiple in M: 128x256.
      {4095, 4097, 4096, 128, 256, 4, 1},
      {4096, 5000, 4000, 128, 256, 4, 1},
      // Fewer: 128x128 tiles when they fill 0.9 of a wave.
      {512, 4096, 4096, 128, 128, 6, 1},
      {256, 8192, 8192, 128, 128, 6, 1},
      {2048, 2048, 2048, 128, 128, 6, 1},
      // Under 0.9 waves: 128x128 still, K never split by default (it lost
      // at 1000^3 on the H200).
      {1000, 1000, 1000, 128, 128, 6, 1},
      {640, 1024, 8192, 128, 128, 6, 1},
      {1000, 1000, 0, 128, 128, 6, 1},
      {0, 0, 0, 128, 256, 4, 1},
  };
  for (const TileCase& c : cases) {
    SCOPED_TRACE(testing::Message() << c.M << "x" << c.N << "x" << c.K);
    const GemmTile t = DefaultGemmTile(90, f16, c.M, c.N, c.K);
    EXPECT_EQ(t.block_m, c.block_m);
    EXPECT_EQ(t.block_n, c.block_n);
    EXPECT_EQ(t.block_k, 64);
    EXPECT_EQ(t.num_stages, c.stages);
    EXPECT_EQ(t.split_k, c.split_k);
  }
  // fp8: 128-byte rows of K.
  EXPECT_EQ(DefaultGemmTile(90, fp8_e4m3).block_k, 128);
  EXPECT_EQ(DefaultGemmTile(90, fp8_e4m3, 1000, 1000, 2048).split_k, 1);
  // The SM count is the device's: 64 tiles of 128x256 fill a wave of 64
  // SMs, not of 132.
  EXPECT_EQ(DefaultGemmTile(90, f16, 1024, 2048, 1024, 64).block_n, 256);
  EXPECT_EQ(DefaultGemmTile(90, f16, 1024, 2048, 1024, 132).block_n, 128);
  // sm_80 keeps its tile, never split.
  const GemmTile a100 = DefaultGemmTile(80, f16, 1000, 1000, 1000);
  EXPECT_EQ(a100.block_m, GemmTile{}.block_m);
  EXPECT_EQ(a100.split_k, 1);
}

}  // namespace
}  // namespace tessel::samples
