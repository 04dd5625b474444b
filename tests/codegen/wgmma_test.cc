// Which gemms take wgmma.mma_async on sm_90a, and that NVRTC compiles what
// the codegen writes for them (no GPU needed; the numerics are the Wgmma
// cases of tessel_codegen_gpu_test and the samples' --check).
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"
#include "tests/common/count.h"

namespace tessel {
namespace {

using testing::Count;

std::string Source(const testing::GemmShape& shape, Target target,
                   PassConfig config = {}) {
  absl::StatusOr<CompiledKernel> k =
      compile(testing::Gemm(shape), {.target = target, .pass_config = config});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? k->source() : "";
}

// 64-row tiles over 4 warps, 128-byte rows: one m64n64k16 per k16 step,
// A and B read by the tensor cores through descriptors (no ldmatrix), one
// wait per k tile, fenced barriers.
TEST(Wgmma, WarpgroupTileTakesWgmma) {
  for (bool transpose_b : {false, true}) {
    SCOPED_TRACE(transpose_b ? "K-major B" : "N-major B");
    std::string src = Source(testing::WgmmaGemm(transpose_b), Target::sm90a());
    EXPECT_EQ(Count(src, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
              4);
    // Scales, then A and B major-ness: K-major A; B N-major unless
    // transposed.
    EXPECT_TRUE(absl::StrContains(
        src, transpose_b ? "p, 1, 1, 0, 0;" : "p, 1, 1, 0, 1;"));
    // One descriptor built per operand; the other three k16 steps add their
    // offset to it.
    EXPECT_EQ(Count(src, "tl::wgmma_desc_sw128("), 2);
    EXPECT_EQ(Count(src, "tl::wgmma_desc_add("), 6);
    EXPECT_EQ(Count(src, "ldmatrix"), 0);
    EXPECT_EQ(Count(src, "tl::wgmma_wait<0>();"), 1);
    EXPECT_GT(Count(src, "tl::fence_proxy_async();"), 0);
    EXPECT_TRUE(absl::StrContains(src, "__align__(1024)"));
  }
}

TEST(Wgmma, TwoWarpgroupsAndBf16) {
  std::string src = Source(testing::WgmmaTwoWarpgroupsGemm(), Target::sm90a());
  EXPECT_EQ(Count(src, "m64n64k16.f32.bf16.bf16"), 2);
}

// Wider tiles: m64n256k16 (B in four atoms), N split into 2 x m64n192k16,
// K rows of two atoms (A's and B's k16 steps 4..7 start in the second),
// M-major A of two atoms (one per warpgroup; A and B carry the LBO).
TEST(Wgmma, WideTilesTakeWgmma) {
  struct Case {
    const char* why;
    testing::GemmShape shape;
    const char* instruction;
    int count;
    const char* lbo;   // the descriptor tail of N-major B (and M-major A)
    int lbo_uses = 1;  // descriptors built with that tail: one per operand
                       // (the other steps add to it)
  };
  const Case cases[] = {
      {"128x256 NN", testing::WgmmaWideNGemm(false), "m64n256k16", 4,
       ", 8192, 1024);"},
      {"128x256 NT", testing::WgmmaWideNGemm(true), "m64n256k16", 4, nullptr},
      {"64x384 NN", testing::WgmmaSplitNGemm(false), "m64n192k16", 8,
       ", 8192, 1024);"},
      {"64x384 NT", testing::WgmmaSplitNGemm(true), "m64n192k16", 8, nullptr},
      // 64 rows over two warpgroups: each its 64 columns of N.
      {"64x128 warpgroups along N, NN",
       testing::WgmmaWarpgroupsSplitNGemm(false), "m64n64k16", 4,
       ", 8192, 1024);"},
      {"64x128 warpgroups along N, NT",
       testing::WgmmaWarpgroupsSplitNGemm(true), "m64n64k16", 4, nullptr},
      {"128x128x128 NN", testing::WgmmaWideKGemm(false), "m64n128k16", 16,
       ", 16384, 1024);"},
      {"128x128x128 NT", testing::WgmmaWideKGemm(true), "m64n128k16", 16,
       nullptr},
      {"128x128x64 TN", testing::WgmmaMMajorAGemm(), "m64n128k16", 4,
       ", 8192, 1024);", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    std::string src = Source(c.shape, Target::sm90a());
    EXPECT_EQ(Count(src, c.instruction), c.count);
    EXPECT_EQ(Count(src, "wgmma.mma_async"), c.count);
    EXPECT_EQ(Count(src, "ldmatrix"), 0);
    if (c.lbo != nullptr) EXPECT_EQ(Count(src, c.lbo), c.lbo_uses);
    EXPECT_EQ(Count(src, "tl::wgmma_desc_sw128("), 2) << "A's and B's bases";
  }
}

TEST(Wgmma, OtherGemmsKeepMmaSync) {
  struct Case {
    const char* why;
    testing::GemmShape shape;
    Target target;
    PassConfig config;
  };
  const testing::GemmShape fits = testing::WgmmaGemm(false);
  testing::GemmShape two_warps_per_row = fits;
  two_warps_per_row.threads = 256;  // M = 64 over 8 warps
  testing::GemmShape short_rows = fits;
  short_rows.transpose_b = true;
  short_rows.bk = 32;  // K-major B rows of 64 bytes
  testing::GemmShape sample_tile =
      testing::WgmmaSampleTileGemm(DataType::kF16, false);
  const Case cases[] = {
      {"sm_80", fits, Target::cuda("sm_80"), {}},
      {"sm_90 without a", fits, Target::cuda("sm_90"), {}},
      {"disable_wgmma", fits, Target::sm90a(), {.disable_wgmma = true}},
      {"M = 64 over 8 warps", two_warps_per_row, Target::sm90a(), {}},
      {"64-byte K-major rows", short_rows, Target::sm90a(), {}},
      {"sample tile on sm_80", sample_tile, Target::cuda("sm_80"), {}},
      {"sample tile, disable_wgmma",
       sample_tile,
       Target::sm90a(),
       {.disable_wgmma = true}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    std::string src = Source(c.shape, c.target, c.config);
    EXPECT_EQ(Count(src, "wgmma.mma_async"), 0);
    EXPECT_GT(Count(src, "tl::mma_m16n8k16_"), 0);
  }
}

TEST(Wgmma, PassConfigIsPartOfTheKey) {
  EXPECT_NE(PassConfig{}.ToString(),
            PassConfig{.disable_wgmma = true}.ToString());
}

}  // namespace
}  // namespace tessel
