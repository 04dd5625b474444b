// CompiledKernel::schedule(): what the scheduler chose, compiled for
// sm_90a through NVRTC (no GPU needed): the GEMM's wgmma, the
// warp-specialized TMA pipeline and the persistent grid; an fp8 GEMM on
// wgmma k32; and an fp8 GEMM in a layout wgmma cannot read, saying it runs
// as FMA loops and why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_join.h"
#include "tessel/tessel.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

std::string ScheduleOf(const ir::Program& p, PassConfig config = {}) {
  absl::StatusOr<CompiledKernel> k =
      compile(p, {.target = Target::sm90a(), .pass_config = config});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? absl::StrJoin(k->schedule(), "\n") : "";
}

TEST(Schedule, NamesTheHopperPath) {
  ir::Program p = testing::Gemm(
      testing::WgmmaSampleTileGemm(DataType::kF16, /*transpose_b=*/false));
  std::string s = ScheduleOf(p);
  EXPECT_THAT(s, HasSubstr("gemm C_local += A_shared * B_shared: wgmma"));
  EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads"));
  EXPECT_THAT(s, HasSubstr("A_tma box [256, 64] swizzle 128"));
  EXPECT_THAT(s, HasSubstr("persistent grid"));
  std::string plain = ScheduleOf(p, {.disable_warp_specialized = true});
  EXPECT_THAT(plain, HasSubstr(": wgmma"));
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("TMA producer threads")));
  // A kernel left on the cp.async pipeline says why.
  EXPECT_THAT(plain, HasSubstr("warp-specialized: no (PassConfig::disable_warp_"
                               "specialized): the cp.async pipeline"));
  EXPECT_THAT(
      ScheduleOf(p, {.disable_tma_lower = true}),
      HasSubstr("warp-specialized: no (PassConfig::disable_tma_lower)"));
}

TEST(Schedule, SaysWhyAPipelinedLoopIsNotSpecialized) {
  // Two warps: the producer / consumer split takes warpgroups.
  testing::GemmShape g{.m = 128, .n = 128, .k = 128, .bm = 64, .bn = 64};
  g.threads = 64;
  EXPECT_THAT(ScheduleOf(testing::Gemm(g)),
              HasSubstr("warp-specialized: no (the kernel has 64 threads; "
                        "128, 256 or 384 are specialized)"));
  // User mbarriers assume every thread runs every statement.
  EXPECT_THAT(ScheduleOf(testing::MbarrierPipeline(4)),
              HasSubstr("warp-specialized: no (the kernel places its own "
                        "mbarriers or barriers)"));
  // No Pipelined loop: nothing to say.
  g.threads = 128;
  g.stages = 0;
  EXPECT_THAT(ScheduleOf(testing::Gemm(g)),
              ::testing::Not(HasSubstr("warp-specialized")));
}

TEST(Schedule, SaysWhenAGemmHasNoTensorCorePath) {
  testing::GemmShape g{.m = 64,
                       .n = 64,
                       .k = 64,
                       .bm = 64,
                       .bn = 64,
                       .bk = 32,
                       .stages = 0,
                       .dtype = DataType::kF8E4M3};
  std::string s = ScheduleOf(testing::Gemm(g));
  EXPECT_THAT(s, HasSubstr("no tensor-core path for fp8_e4m3"));
  EXPECT_THAT(s, HasSubstr("K-major only"));
  EXPECT_THAT(s, HasSubstr(": FMA loops"));
}

TEST(Schedule, Fp8GemmRunsOnWgmmaK32) {
  std::string s = ScheduleOf(testing::Gemm(
      testing::WgmmaFp8SampleTileGemm(DataType::kF8E4M3, DataType::kF8E4M3)));
  EXPECT_THAT(s, HasSubstr(": wgmma, warps 8x1"));
  EXPECT_THAT(s, HasSubstr("4 k32 steps"));
  EXPECT_THAT(s, HasSubstr("warp-specialized"));
}

}  // namespace
}  // namespace tessel
