// The GEMM sample's default tile takes wgmma.mma_async on sm_90a (f16 and
// bf16, NN and NT) and NVRTC compiles it; sm_80 keeps mma.sync.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "samples/gemm.h"
#include "tessel/compile.h"
#include "tests/common/count.h"

namespace tessel {
namespace {

using testing::Count;

// The GEMM sample's default tile (256x128x64, 256 threads): each of the
// two warpgroups owns 128 rows, two m64n128k16 per k16 step; A K-major
// from shared, B through the atom stride (LBO 8192: two 64-column atoms of
// [64][128 B]) N-major, or K-major when transposed (NT).
TEST(WgmmaSample, DefaultTileTakesWgmma) {
  for (DataType dtype : {DataType::kF16, DataType::kBF16}) {
    for (samples::GemmLayout layout :
         {samples::GemmLayout::kNN, samples::GemmLayout::kNT}) {
      const bool nt = layout == samples::GemmLayout::kNT;
      const std::string type = dtype == DataType::kBF16 ? "bf16" : "f16";
      SCOPED_TRACE(type + (nt ? " NT" : " NN"));
      absl::StatusOr<Program> p = samples::GemmProgram({.M = 4096,
                                                        .N = 4096,
                                                        .K = 4096,
                                                        .in_dtype = dtype,
                                                        .layout = layout});
      ASSERT_TRUE(p.ok()) << p.status();
      absl::StatusOr<CompiledKernel> k =
          compile(*p, {.target = Target::sm90a()});
      ASSERT_TRUE(k.ok()) << k.status();
      const std::string& src = k->source();
      EXPECT_EQ(Count(src, absl::StrCat("wgmma.mma_async.sync.aligned."
                                        "m64n128k16.f32.",
                                        type, ".", type)),
                8);  // 4 k16 steps x 2 m64 blocks
      EXPECT_EQ(Count(src, "wgmma.mma_async"), 8);
      EXPECT_TRUE(
          absl::StrContains(src, nt ? "p, 1, 1, 0, 0;" : "p, 1, 1, 0, 1;"));
      // B's descriptor built once (with its LBO when N-major), the other
      // k16 steps one add each (read by both m64 blocks); A's (K-major)
      // steps and second m64 block add to its base too.
      EXPECT_EQ(Count(src, ", 8192, 1024);"), nt ? 0 : 1);
      EXPECT_EQ(Count(src, "tl::wgmma_desc_sw128("), 2);
      EXPECT_EQ(Count(src, "tl::wgmma_desc_add(B_shared_desc, "), 3);
      EXPECT_EQ(Count(src, "tl::wgmma_desc_add(A_shared_desc, "), 7);
      // The k step's wgmmas are one asm statement, each accumulator named
      // once in it (and once in its fence after the loop): NVVM's time grows
      // faster than linearly with a kernel's asm operands.
      EXPECT_EQ(Count(src, "asm volatile(\n"), 1);
      EXPECT_EQ(Count(src, "\"+f\"(C_local[127])"), 2);
      EXPECT_EQ(Count(src, "ldmatrix"), 0);
      EXPECT_EQ(Count(src, "tl::mma_m16n8k16_"), 0);
      // The accumulator is [2 m64 blocks][16 n8 tiles][4], declared flat.
      EXPECT_TRUE(absl::StrContains(src, "float C_local[128];"));
      EXPECT_TRUE(absl::StrContains(src, "\"+f\"(C_local[127])"));
      // One group stays in flight across the k loop (wait<1>); the operand
      // fences (one per m64 block) follow only the wait<0> after it.
      EXPECT_EQ(Count(src, "tl::wgmma_wait<1>();"), 1);
      EXPECT_EQ(Count(src, "asm volatile(\"\" :"), 2);
    }
  }
}

TEST(WgmmaSample, DefaultTileKeepsMmaSyncOnSm80) {
  absl::StatusOr<Program> p =
      samples::GemmProgram({.M = 4096, .N = 4096, .K = 4096});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = Target::cuda("sm_80")});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(Count(k->source(), "wgmma.mma_async"), 0);
  EXPECT_GT(Count(k->source(), "tl::mma_m16n8k16_"), 0);
}

}  // namespace
}  // namespace tessel
