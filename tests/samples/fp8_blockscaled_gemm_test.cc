// samples/fp8_blockscaled_gemm: the interpreter against float64 at ragged
// sizes (and a kernel that skipped the promotion's scales fails the same
// check), K not a multiple of 128 refused at the caller's line, the sm_80
// factory refusal, and on sm_90a the warp-specialized TMA kernel with the
// scales' boxes in the producer and the e4m3 wgmma in the consumers;
// cluster pairs: which operand each kernel multicasts, the grid padded
// where both tile counts are odd, and those grids against float64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <source_location>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/fp8_blockscaled_gemm.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CheckResult RunOnCpu(Workload& w) {
  absl::StatusOr<RunResult> run = Execute(w, {.backend = Backend::kCpu});
  EXPECT_TRUE(run.ok()) << run.status();
  absl::StatusOr<CheckResult> check = CheckOutputs(w);
  EXPECT_TRUE(check.ok()) << check.status();
  return check.ok() ? *check : CheckResult{};
}

TEST(Fp8BlockScaledGemm, MatchesFloat64AtRaggedSizes) {
  // Rows past M (sa's padded rows too), columns past N, several K blocks,
  // a 64-column tile (one sb row for two tiles), a 256-column one (two) and
  // a 160-column one (tiles starting inside an sb row: two scales per row)
  // and a 224-column one (up to three sb rows: sb per element).
  for (const Fp8BlockScaledGemmConfig& c :
       {Fp8BlockScaledGemmConfig{.M = 131, .N = 250, .K = 384},
        Fp8BlockScaledGemmConfig{.M = 1, .N = 129, .K = 128},
        Fp8BlockScaledGemmConfig{.M = 70, .N = 200, .K = 256, .block_n = 64},
        Fp8BlockScaledGemmConfig{
            .M = 64, .N = 300, .K = 256, .block_n = 256, .num_stages = 3},
        Fp8BlockScaledGemmConfig{.M = 40, .N = 500, .K = 256, .block_n = 160},
        Fp8BlockScaledGemmConfig{
            .M = 40, .N = 700, .K = 256, .block_n = 224, .num_stages = 3}}) {
    absl::StatusOr<Workload> w = Fp8BlockScaledGemmWorkload(c, 3);
    ASSERT_TRUE(w.ok()) << w.status();
    CheckResult check = RunOnCpu(*w);
    EXPECT_TRUE(check.ok) << w->shape << "\n" << check.report;
  }
}

TEST(Fp8BlockScaledGemm, TheCheckCatchesAScaleTakenFromTheWrongBlock) {
  // The reference with sb's K blocks swapped: the kernel's output must not
  // pass against it (the tolerance is tight enough to see a scale).
  absl::StatusOr<Workload> w =
      Fp8BlockScaledGemmWorkload({.M = 64, .N = 128, .K = 256}, 4);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(RunOnCpu(*w).ok);
  HostTensor swapped = w->tensors.at("sb");
  const int64_t kb = swapped.shape()[1];
  for (int64_t r = 0; r < swapped.shape()[0]; ++r) {
    const double first = swapped.get_flat(r * kb);
    swapped.set_flat(r * kb, swapped.get_flat(r * kb + 1));
    swapped.set_flat(r * kb + 1, first);
  }
  w->reference =
      [swapped](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    return std::vector<Expected>{
        {"D",
         ReferenceFp8BlockScaledGemm(w.tensors.at("A"), w.tensors.at("sa"),
                                     w.tensors.at("B"), swapped),
         1e-2, 1e-2}};
  };
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
}

TEST(Fp8BlockScaledGemm, RefusesKNotAMultipleOf128AtTheCallersLine) {
  // The builder takes the caller's line from a defaulted argument.
  const std::source_location here = std::source_location::current();
  absl::StatusOr<Program> p =
      Fp8BlockScaledGemmProgram({.M = 64, .N = 64, .K = 1000}, here);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              HasSubstr(absl::StrCat("fp8_blockscaled_gemm_test.cc:",
                                     here.line(), ": fp8_blockscaled_gemm")))
      << p.status();
  EXPECT_THAT(p.status().message(), HasSubstr("K=1000 is not a multiple of "
                                              "128"));
}

TEST(Fp8BlockScaledGemm, TheFactoryBuildsForSm90aOnly) {
  const nlohmann::json params = {{"M", 256}, {"N", 256}, {"K", 256}};
  EXPECT_TRUE(KernelRegistry::Global()
                  .Build("fp8_blockscaled_gemm", params, Target::sm90a())
                  .ok());
  absl::StatusOr<Program> sm80 = KernelRegistry::Global().Build(
      "fp8_blockscaled_gemm", params, Target::sm80());
  EXPECT_EQ(sm80.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(sm80.status().message(),
              HasSubstr("fp8 tensor cores need sm_89 or later"));
}

TEST(Fp8BlockScaledGemm, Sm90aIsTheWarpSpecializedTmaKernel) {
  // The producer loads A, B and sa's row of the block per K step; the
  // consumers run the e4m3 wgmma into the fresh tile and the promotion.
  absl::StatusOr<Program> p =
      Fp8BlockScaledGemmProgram({.M = 4096, .N = 7168, .K = 16384});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string s = absl::StrJoin(k->schedule(), "\n");
  EXPECT_THAT(s, HasSubstr("gemm acc_step += A_shared * B_shared: wgmma, warps "
                           "8x1, warp tile 16x128 (1x16 tiles), 4 k32 steps, "
                           "A descriptor (K-major), B descriptor (K-major)"));
  EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads, 256 "
                           "consumer threads"));
  EXPECT_THAT(s, HasSubstr("A_tma box [128, 128] swizzle 128, B_tma box "
                           "[128, 128] swizzle 128, sa_tma box [1, 128]"));
  EXPECT_THAT(s, HasSubstr("persistent grid"));
  EXPECT_THAT(s, Not(HasSubstr("FMA")));
}

TEST(Fp8BlockScaledGemm, Sm90aTilesOfOtherWidthsStaySpecialized) {
  // 160 columns (tiles starting inside an sb row, sa and sb per element)
  // and 64 (one wgmma n64 per warpgroup) keep the same kernel shape.
  for (int block_n : {160, 64}) {
    absl::StatusOr<Program> p = Fp8BlockScaledGemmProgram(
        {.M = 4096, .N = 7168, .K = 16384, .block_n = block_n});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string s = absl::StrJoin(k->schedule(), "\n");
    EXPECT_THAT(s, HasSubstr(absl::StrCat("warp tile 16x", block_n)));
    EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads"));
    EXPECT_THAT(s, Not(HasSubstr("FMA"))) << s;
  }
}

TEST(Fp8BlockScaledGemm, GroupedMatchesFloat64WithRaggedAndEmptyGroups) {
  // Groups of 100, 0, 257 and 31 rows (padded to 128 each: 640 rows, the
  // padding rows' m_indices -1), ragged N; 64-row tiles too.
  for (int block_m : {128, 64}) {
    absl::StatusOr<Workload> w = Fp8BlockScaledGemmWorkload(
        {.N = 200, .K = 256, .block_m = block_m}, 5, {100, 0, 257, 31});
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->kernel, "fp8_blockscaled_gemm_grouped");
    CheckResult check = RunOnCpu(*w);
    EXPECT_TRUE(check.ok) << w->shape << "\n" << check.report;
  }
  EXPECT_THAT(
      Fp8BlockScaledGemmProgram({.M = 300, .N = 128, .K = 128, .groups = 2})
          .status()
          .message(),
      HasSubstr("grouped rows come in whole tiles of block_m=128"));
}

TEST(Fp8BlockScaledGemm, Sm90aGroupedStaysPersistentAndSpecialized) {
  // The tile's group is a T::let of m_indices after the allocations: the
  // consumers read it per tile, the producer's B box origin reads its
  // value; B's box is one group's [128, 128] of the [G, N, K] tensor.
  absl::StatusOr<Program> p = Fp8BlockScaledGemmProgram(
      {.M = 8 * 4096, .N = 4096, .K = 7168, .groups = 8});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string s = absl::StrJoin(k->schedule(), "\n");
  EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads, 256 "
                           "consumer threads"));
  EXPECT_THAT(s, HasSubstr("B_tma box [1, 128, 128] swizzle 128"));
  EXPECT_THAT(s, HasSubstr("persistent grid"));
  EXPECT_THAT(s, Not(HasSubstr("FMA")));
}

// The kernel's schedule and source on sm_90a in clusters of two.
struct Paired {
  std::string schedule, source;
};

Paired CompilePaired(const Fp8BlockScaledGemmConfig& c) {
  absl::StatusOr<Program> p = Fp8BlockScaledGemmProgram(c);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  absl::StatusOr<CompiledKernel> k = compile(
      *p, {.target = Target::sm90a(), .pass_config = {.cluster_size = 2}});
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return {};
  return {absl::StrJoin(k->schedule(), "\n"), k->source()};
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + what.size()))
    ++n;
  return n;
}

TEST(Fp8BlockScaledGemm, Cluster2DensePairsAlongMAndMulticastsB) {
  // 32 M tiles: pairs along by share B's [128, 128] box, each block loading
  // 64 rows of it for both; A and sa's row are the block's own.
  Paired k = CompilePaired({.M = 4096, .N = 7168, .K = 16384, .cluster = 2});
  EXPECT_THAT(k.schedule, HasSubstr("clusters of 2 blocks on tiles next to "
                                    "each other along by"));
  EXPECT_THAT(k.schedule, HasSubstr("B_tma box [64, 128] swizzle 128"));
  EXPECT_EQ(Count(k.source, "tl::tma_load_multicast("), 1) << k.source;
  EXPECT_EQ(Count(k.source, "tl::tma_load("), 2) << k.source;
  // One arrival per consumer warp of both blocks on each stage.
  EXPECT_THAT(k.source, HasSubstr("tl::mbarrier_init(&tma_empty[0], 16);"));
}

TEST(Fp8BlockScaledGemm, Cluster2GroupedPairsAlongNAndMulticastsA) {
  // Two M tiles may belong to two groups (B of each tile's own): the pairs
  // run along bx and share A's box; B and sa stay each block's.
  Paired k = CompilePaired(
      {.M = 8 * 4096, .N = 4096, .K = 7168, .groups = 8, .cluster = 2});
  EXPECT_THAT(k.schedule, HasSubstr("clusters of 2 blocks on tiles next to "
                                    "each other along bx"));
  EXPECT_THAT(k.schedule, HasSubstr("A_tma box [64, 128] swizzle 128"));
  EXPECT_THAT(k.schedule, HasSubstr("B_tma box [1, 128, 128] swizzle 128"));
  EXPECT_EQ(Count(k.source, "tl::tma_load_multicast("), 1) << k.source;
}

TEST(Fp8BlockScaledGemm, Cluster2PadsAGridOfOddTileCounts) {
  // 3 x 3 tiles pair nowhere; cluster 2 adds an M tile (dense) or an N tile
  // (grouped, N 3 tiles) so that the pass pairs them.
  const Fp8BlockScaledGemmConfig odd{.M = 257, .N = 300, .K = 384};
  Fp8BlockScaledGemmConfig paired = odd;
  paired.cluster = 2;
  EXPECT_THAT(CompilePaired(odd).schedule, HasSubstr("clusters: none"));
  EXPECT_THAT(CompilePaired(paired).schedule,
              HasSubstr("clusters of 2 blocks on tiles next to each other "
                        "along by"));
  EXPECT_THAT(
      CompilePaired({.M = 640, .N = 300, .K = 256, .groups = 4, .cluster = 2})
          .schedule,
      HasSubstr("clusters of 2 blocks on tiles next to each other along bx"));
}

TEST(Fp8BlockScaledGemm, Cluster2GridsMatchFloat64) {
  // The padded grids' extra tiles (past M, past N) store nothing; ragged
  // edges inside them still right; the workload's step asks for the pairs.
  for (const Fp8BlockScaledGemmConfig& c :
       {Fp8BlockScaledGemmConfig{.M = 257, .N = 300, .K = 384, .cluster = 2},
        Fp8BlockScaledGemmConfig{.M = 200, .N = 136, .K = 256, .cluster = 2},
        Fp8BlockScaledGemmConfig{.M = 61, .N = 7, .K = 128, .cluster = 2}}) {
    absl::StatusOr<Workload> w = Fp8BlockScaledGemmWorkload(c, 3);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->steps[0].pass_config.cluster_size, 2);
    EXPECT_THAT(w->shape, HasSubstr("cluster2"));
    CheckResult check = RunOnCpu(*w);
    EXPECT_TRUE(check.ok) << w->shape << "\n" << check.report;
  }
  absl::StatusOr<Workload> w = Fp8BlockScaledGemmWorkload(
      {.N = 300, .K = 256, .cluster = 2}, 5, {100, 0, 257, 31});
  ASSERT_TRUE(w.ok()) << w.status();
  CheckResult check = RunOnCpu(*w);
  EXPECT_TRUE(check.ok) << w->shape << "\n" << check.report;
}

TEST(Fp8BlockScaledGemm, RefusesClustersOtherThanOneOrTwo) {
  const std::source_location here = std::source_location::current();
  absl::StatusOr<Program> p = Fp8BlockScaledGemmProgram(
      {.M = 64, .N = 64, .K = 128, .cluster = 4}, here);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      p.status().message(),
      HasSubstr(absl::StrCat("fp8_blockscaled_gemm_test.cc:", here.line(),
                             ": fp8_blockscaled_gemm: "
                             "cluster=4")))
      << p.status();
  // The registered param: 1 or 2.
  nlohmann::json params = {{"M", 256}, {"N", 256}, {"K", 256}, {"cluster", 2}};
  EXPECT_TRUE(KernelRegistry::Global()
                  .Build("fp8_blockscaled_gemm", params, Target::sm90a())
                  .ok());
  params["cluster"] = 3;
  EXPECT_FALSE(KernelRegistry::Global()
                   .Build("fp8_blockscaled_gemm", params, Target::sm90a())
                   .ok());
}

}  // namespace
}  // namespace tessel::samples
