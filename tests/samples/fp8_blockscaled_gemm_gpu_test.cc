// samples/fp8_blockscaled_gemm on the GPU against float64 (the dequantized
// inputs) at ragged sizes: rows past M, columns past N, tiles that start
// inside an sb row, and a long K where the promotion every 128 of K is what
// keeps the error small; the grouped contiguous kernel with ragged and
// empty groups; both in cluster pairs (TMA multicast), padded grids among
// them. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "samples/execute.h"
#include "samples/fp8_blockscaled_gemm.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

// A config and, for the grouped kernel, its groups' rows.
struct Case {
  Fp8BlockScaledGemmConfig config;
  std::vector<int> group_rows;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.config.M << "x" << c.config.N << "x" << c.config.K << " block_n "
      << c.config.block_n << " groups " << c.group_rows.size() << " cluster "
      << c.config.cluster;
}

class Fp8BlockScaledGemmGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { TESSEL_SKIP_WITHOUT_GPU(); }
};

TEST_P(Fp8BlockScaledGemmGpu, MatchesFloat64) {
  absl::StatusOr<Workload> w =
      Fp8BlockScaledGemmWorkload(GetParam().config, 7, GetParam().group_rows);
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
        Case{{.M = 128, .N = 128, .K = 128}},
        Case{{.M = 1000, .N = 1500, .K = 512}},
        Case{{.M = 61, .N = 200, .K = 384}},
        Case{{.M = 333, .N = 1000, .K = 256, .block_n = 160}},
        Case{{.M = 257, .N = 520, .K = 8192}},
        Case{{.M = 130, .N = 300, .K = 256, .block_n = 64}},
        Case{{.M = 300,
              .N = 1000,
              .K = 512,
              .block_n = 192,
              .num_stages = 5}},  // 6 stages: 232 KB
        Case{{.M = 500,
              .N = 300,
              .K = 512,
              .block_m = 192,
              .num_stages = 5,
              .threads = 384}},
        Case{{.N = 300, .K = 512}, {100, 0, 257, 31}},
        Case{{.N = 4096, .K = 1024}, {1, 700, 0, 129, 2000}},
        // Cluster pairs (TMA multicast): along M sharing B (8 M tiles),
        // along N sharing A (1 M tile, 2 N), grids padded by an M tile (3 x
        // 5, long K; 192-row tiles over three warpgroups), grouped along N
        // (3 N tiles padded to 4; 32).
        Case{{.M = 1000, .N = 1500, .K = 512, .cluster = 2}},
        Case{{.M = 61, .N = 200, .K = 384, .cluster = 2}},
        Case{{.M = 257, .N = 520, .K = 8192, .cluster = 2}},
        Case{{.M = 500,
              .N = 300,
              .K = 512,
              .block_m = 192,
              .num_stages = 5,
              .threads = 384,
              .cluster = 2}},
        Case{{.N = 300, .K = 512, .cluster = 2}, {100, 0, 257, 31}},
        Case{{.N = 4096, .K = 1024, .cluster = 2}, {1, 700, 0, 129, 2000}}),
    [](const auto& info) {
      const Fp8BlockScaledGemmConfig& c = info.param.config;
      std::string name = "M" + std::to_string(c.M) + "_N" +
                         std::to_string(c.N) + "_K" + std::to_string(c.K) +
                         "_bm" + std::to_string(c.block_m) + "_bn" +
                         std::to_string(c.block_n);
      if (!info.param.group_rows.empty())
        name += "_groups" + std::to_string(info.param.group_rows.size());
      if (c.cluster > 1) name += "_cluster" + std::to_string(c.cluster);
      return name;
    });

}  // namespace
}  // namespace tessel::samples
