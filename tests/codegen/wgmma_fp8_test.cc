// fp8 (e4m3, e5m2) gemms on sm_90a: which take wgmma m64nNk32, what the
// codegen writes for them, that NVRTC compiles it (no GPU needed), and
// what schedule() says for those that stay FMA loops. The numbers are the
// GemmWgmmaFp8 cases of tessel_codegen_gpu_test and the samples' fp8 cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "samples/gemm.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"
#include "tests/common/count.h"

namespace tessel {
namespace {

using testing::Count;
using ::testing::HasSubstr;

constexpr DataType kE4M3 = DataType::kF8E4M3;
constexpr DataType kE5M2 = DataType::kF8E5M2;

CompiledKernel Compile(const ir::Program& p, Target target,
                       PassConfig config = {}) {
  absl::StatusOr<CompiledKernel> k =
      compile(p, {.target = target, .pass_config = config});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel();
}

std::string Schedule(const CompiledKernel& k) {
  return k.valid() ? absl::StrJoin(k.schedule(), "\n") : "";
}

// The sample's fp8 tile: each warpgroup issues one m64n256k32 per k32 step
// (4 per 128-wide k tile), A and B through K-major descriptors 32 bytes
// apart, in the warp-specialized TMA pipeline (one box per 128-byte-row
// tile), every pairing of e4m3 and e5m2.
TEST(WgmmaFp8, SampleTileTakesWgmmaK32) {
  const std::pair<DataType, DataType> pairs[] = {
      {kE4M3, kE4M3}, {kE5M2, kE5M2}, {kE4M3, kE5M2}, {kE5M2, kE4M3}};
  for (auto [a, b] : pairs) {
    auto name = [](DataType t) { return t == kE4M3 ? "e4m3" : "e5m2"; };
    const std::string types = absl::StrCat(name(a), ".", name(b));
    SCOPED_TRACE(types);
    CompiledKernel k = Compile(
        testing::Gemm(testing::WgmmaFp8SampleTileGemm(a, b)), Target::sm90a());
    const std::string& src = k.source();
    EXPECT_EQ(Count(src, "wgmma.mma_async.sync.aligned.m64n256k32.f32." +
                             types + " "),
              4);
    EXPECT_EQ(Count(src, "wgmma.mma_async"), 4);
    // No transpose immediates for fp8 (K-major only).
    EXPECT_EQ(Count(src, "p, 1, 1;"), 4);
    EXPECT_EQ(Count(src, "ldmatrix"), 0);
    // k32 steps: +32, +64, +96 bytes into the 128-byte atom rows (2, 4, 6
    // 16-byte units added to the step's base).
    EXPECT_TRUE(absl::StrContains(src, "tl::wgmma_desc_add(A_shared_desc, 6)"));
    EXPECT_TRUE(absl::StrContains(src, "tl::wgmma_desc_add(B_shared_desc, 6)"));
    const std::string s = Schedule(k);
    EXPECT_THAT(s, HasSubstr("gemm C_local += A_shared * B_shared: wgmma, "
                             "warps 8x1, warp tile 16x256 (1x32 tiles), 4 "
                             "k32 steps, A descriptor (K-major), B "
                             "descriptor (K-major)"));
    EXPECT_THAT(s, HasSubstr("A_tma box [128, 128] swizzle 128"));
    EXPECT_THAT(s, HasSubstr("B_tma box [256, 128] swizzle 128"));
    EXPECT_THAT(s, HasSubstr("persistent grid"));
  }
}

// Without the warp-specialized pipeline (cp.async stages) and in one
// warpgroup: still wgmma k32.
TEST(WgmmaFp8, CpAsyncPipelineAndOneWarpgroup) {
  CompiledKernel k =
      Compile(testing::Gemm(testing::WgmmaFp8SmallGemm(kE4M3, kE4M3)),
              Target::sm90a(), {.disable_warp_specialized = true});
  EXPECT_EQ(Count(k.source(), "m64n64k32.f32.e4m3.e4m3 "), 4);
  EXPECT_GT(Count(k.source(), "tl::cp_async"), 0);
  EXPECT_THAT(Schedule(k), HasSubstr(": wgmma, warps 4x1"));
  EXPECT_THAT(Schedule(k), ::testing::Not(HasSubstr("TMA producer threads")));
  EXPECT_THAT(Schedule(k),
              HasSubstr("warp-specialized: no (PassConfig::disable_warp_"
                        "specialized)"));
}

// The GEMM sample's fp8 default tile fits the sm_90 shared memory (192 KB)
// and compiles; on sm_80 its (wider) default runs FMA loops and says so.
TEST(WgmmaFp8, SampleDefaultTiles) {
  for (DataType dtype : {kE4M3, kE5M2}) {
    samples::GemmConfig c{.M = 8192,
                          .N = 8192,
                          .K = 8192,
                          .in_dtype = dtype,
                          .layout = samples::GemmLayout::kNT,
                          .tile = samples::DefaultGemmTile(90, dtype)};
    absl::StatusOr<Program> p = samples::GemmProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    CompiledKernel k = Compile(p->ir(), Target::sm90a());
    EXPECT_EQ(Count(k.source(), "m64n256k32"), 4);
    EXPECT_THAT(Schedule(k), HasSubstr("4 k32 steps"));
    c.tile = samples::DefaultGemmTile(80, dtype);
    p = samples::GemmProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    CompiledKernel old = Compile(p->ir(), Target::cuda("sm_80"));
    EXPECT_THAT(Schedule(old), HasSubstr("fp8 tensor cores need wgmma "
                                         "(sm_90a), not sm_80: FMA loops"));
  }
}

// wgmma reads fp8 K-major only: a B stored [K, N] (or A stored [K, M])
// runs FMA loops, and schedule() names the layout to use.
TEST(WgmmaFp8, MnMajorOperandsFallBackSayingWhy) {
  for (bool transpose_a : {false, true}) {
    testing::GemmShape g = testing::WgmmaFp8SmallGemm(kE4M3, kE4M3);
    g.transpose_a = transpose_a;
    g.transpose_b = transpose_a;  // NN, then TT
    CompiledKernel k = Compile(testing::Gemm(g), Target::sm90a());
    EXPECT_EQ(Count(k.source(), "wgmma.mma_async"), 0);
    EXPECT_THAT(Schedule(k),
                HasSubstr("no tensor-core path for fp8_e4m3 x fp8_e4m3 -> "
                          "f32 here: fp8 wgmma reads A and B K-major only"));
  }
}

TEST(WgmmaFp8, OtherFallbacksSayWhy) {
  const testing::GemmShape fits = testing::WgmmaFp8SmallGemm(kE5M2, kE4M3);
  EXPECT_THAT(Schedule(Compile(testing::Gemm(fits), Target::sm90a(),
                               {.disable_wgmma = true})),
              HasSubstr("fp8_e5m2 x fp8_e4m3 -> f32 here: wgmma is disabled"));
  testing::GemmShape narrow_k = fits;
  narrow_k.bk = 64;  // 64-byte rows: not the 128-byte swizzle atom
  EXPECT_THAT(Schedule(Compile(testing::Gemm(narrow_k), Target::sm90a())),
              HasSubstr("the tile does not fit wgmma"));
}

}  // namespace
}  // namespace tessel
