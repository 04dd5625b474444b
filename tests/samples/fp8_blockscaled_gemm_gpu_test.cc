// samples/fp8_blockscaled_gemm on the GPU against float64 (the dequantized
// inputs) at ragged sizes: rows past M, columns past N, tiles that start
// inside an sb row, and a long K where the promotion every 128 of K is what
// keeps the error small. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include "samples/execute.h"
#include "samples/fp8_blockscaled_gemm.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

class Fp8BlockScaledGemmGpu
    : public ::testing::TestWithParam<Fp8BlockScaledGemmConfig> {
 protected:
  void SetUp() override { TESSEL_SKIP_WITHOUT_GPU(); }
};

TEST_P(Fp8BlockScaledGemmGpu, MatchesFloat64) {
  absl::StatusOr<Workload> w = Fp8BlockScaledGemmWorkload(GetParam(), 7);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kGpu});
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok) << w->shape << "\n" << check->report;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, Fp8BlockScaledGemmGpu,
    ::testing::Values(
        Fp8BlockScaledGemmConfig{.M = 128, .N = 128, .K = 128},
        Fp8BlockScaledGemmConfig{.M = 1000, .N = 1500, .K = 512},
        Fp8BlockScaledGemmConfig{.M = 61, .N = 200, .K = 384},
        Fp8BlockScaledGemmConfig{.M = 333, .N = 1000, .K = 256, .block_n = 160},
        Fp8BlockScaledGemmConfig{.M = 257, .N = 520, .K = 8192},
        Fp8BlockScaledGemmConfig{.M = 130, .N = 300, .K = 256, .block_n = 64}),
    [](const auto& info) {
      const Fp8BlockScaledGemmConfig& c = info.param;
      return "M" + std::to_string(c.M) + "_N" + std::to_string(c.N) + "_K" +
             std::to_string(c.K) + "_bn" + std::to_string(c.block_n);
    });

}  // namespace
}  // namespace tessel::samples
