// samples/w4a16_gemm beyond the shared sample cases: the packer's nibble
// order, the interpreter against float64 at ragged M / N / K (K not a
// multiple of 8 or of the 128 group), bad configs refused, and what the
// scheduler makes of the kernel on sm_90a and sm_80 (tensor-core gemms,
// small-M padding at M = 1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "samples/execute.h"
#include "samples/w4a16_gemm.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

TEST(W4A16Gemm, PacksLowNibbleFirstAlongK) {
  // Row 0: k = 0..8 hold 1..9 (9 values: two words, the second holding
  // one); row 1: 15 everywhere.
  std::vector<uint8_t> u = {1,  2,  3,  4,  5,  6,  7,  8,  9,
                            15, 15, 15, 15, 15, 15, 15, 15, 15};
  HostTensor wq = PackInt4Weights(u, 2, 9);
  ASSERT_EQ(wq.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(uint32_t(wq.get_flat_int(0)), 0x87654321u);
  EXPECT_EQ(uint32_t(wq.get_flat_int(1)), 0x9u);
  EXPECT_EQ(uint32_t(wq.get_flat_int(2)), 0xFFFFFFFFu);
  EXPECT_EQ(uint32_t(wq.get_flat_int(3)), 0xFu);
  HostTensor scales(f16, {1, 2});
  scales.set_flat(0, 0.5);
  scales.set_flat(1, -2.0);
  std::vector<double> w = DequantizeInt4Weights(wq, scales, 2, 9);
  EXPECT_EQ(w[0], (1 - 8) * 0.5);
  EXPECT_EQ(w[8], (9 - 8) * 0.5);
  EXPECT_EQ(w[9], (15 - 8) * -2.0);
}

TEST(W4A16Gemm, MatchesFloat64AtRaggedSizes) {
  const std::vector<W4A16Config> configs = {
      {.M = 1, .N = 40, .K = 140},   // small M, K past one group, K % 8 = 4
      {.M = 5, .N = 70, .K = 257},   // K % 8 = 1
      {.M = 33, .N = 16, .K = 128},  // one group exactly
      {.M = 80,
       .N = 136,
       .K = 264,
       .tile = {.block_m = 64, .block_n = 64},
       .default_tile = false},         // several row and column tiles
      {.M = 130, .N = 100, .K = 388},  // 128-row tiles, scales in the loop
      {.M = 17,
       .N = 130,
       .K = 260,
       .tile = LegacyW4A16Tile(17),
       .default_tile = false},  // the first form (W through shared)
      {.M = 130,
       .N = 100,
       .K = 388,
       .tile = LegacyW4A16Tile(130),
       .default_tile = false},
  };
  for (const W4A16Config& c : configs) {
    SCOPED_TRACE(std::to_string(c.M) + "x" + std::to_string(c.N) + "x" +
                 std::to_string(c.K));
    absl::StatusOr<Workload> w = W4A16GemmWorkload(c, 3);
    ASSERT_TRUE(w.ok()) << w.status();
    absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kCpu});
    ASSERT_TRUE(run.ok()) << run.status();
    absl::StatusOr<CheckResult> check = CheckOutputs(*w);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

TEST(W4A16Gemm, RejectsBadConfigs) {
  auto message = [](const W4A16Config& c) {
    return std::string(W4A16GemmProgram(c).status().message());
  };
  EXPECT_THAT(message({.M = 0, .N = 8, .K = 8}),
              HasSubstr("sizes must be positive"));
  EXPECT_THAT(message({.M = 4,
                       .N = 8,
                       .K = 8,
                       .tile = {.block_m = 24},
                       .default_tile = false}),
              HasSubstr("block_m=24 and block_n=128 must be multiples of 16"));
}

// The schedule of the tile the target gets (stages cut to its shared
// memory); `legacy`: the first form's tile.
std::string Schedule(W4A16Config c, const Target& target, bool legacy = false) {
  c.tile = legacy ? LegacyW4A16Tile(c.M, target.sm())
                  : DefaultW4A16Tile(c.M, target.sm());
  c.default_tile = false;
  absl::StatusOr<Program> p = W4A16GemmProgram(c);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = target});
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return "";
  std::string s;
  for (const std::string& line : k->schedule()) s += line + "\n";
  return s;
}

TEST(W4A16Gemm, WeightsAreTheRegisterAOperandOfASwappedGemm) {
  // C^T = W A^T: the dequantized weights (W_frag) are the wgmma / mma.sync
  // A operand in registers, A's tile the shared B (K-major descriptor on
  // sm_90a), its rows the instruction's N (16 at M <= 16: m64n16k16).
  // The TMA producer loads A, the packed words and the scales; one
  // consumer warpgroup dequantizes and multiplies.
  for (int M : {1, 16}) {
    const std::string s90 =
        Schedule({.M = M, .N = 8192, .K = 8192}, Target::sm90a());
    EXPECT_THAT(s90, HasSubstr("gemm acc_step += W_frag * A_shared: wgmma, "
                               "warps 4x1, warp tile 16x16 (1x2 tiles), 8 "
                               "k16 steps, A registers, B descriptor "
                               "(K-major"));
    EXPECT_THAT(s90, HasSubstr("warp-specialized: 128 TMA producer threads, "
                               "128 consumer threads; tensor maps A_tma box "
                               "[16, 64] swizzle 128, Wq_tma box [64, 16]"));
    EXPECT_THAT(Schedule({.M = M, .N = 8192, .K = 8192}, Target::sm80()),
                HasSubstr("gemm acc_step += W_frag * A_shared: mma.sync, "
                          "warps 4x1, warp tile 16x16 (1x2 tiles), 8 k16 "
                          "steps, A registers, B ldmatrix"));
  }
  // M = 64: m64n64; above, 128 rows of A (m64n128) and no acc_step.
  EXPECT_THAT(Schedule({.M = 64, .N = 8192, .K = 8192}, Target::sm90a()),
              HasSubstr("gemm acc_step += W_frag * A_shared: wgmma, warps "
                        "4x1, warp tile 16x64"));
  const std::string s256 =
      Schedule({.M = 256, .N = 8192, .K = 8192}, Target::sm90a());
  EXPECT_THAT(s256, HasSubstr("gemm acc += W_frag * A_shared: wgmma, warps "
                              "4x1, warp tile 16x128"));
  EXPECT_THAT(s256, HasSubstr("warp-specialized: 128 TMA producer threads"));
  EXPECT_THAT(Schedule({.M = 256, .N = 8192, .K = 8192}, Target::sm80()),
              HasSubstr("gemm acc += W_frag * A_shared: mma.sync, warps 4x1, "
                        "warp tile 16x128"));
}

TEST(W4A16Gemm, TheFirstFormKeepsWThroughSharedMemory) {
  // swap_ab = false: W dequantized into W_shared, the gemm's B operand
  // (small-M padding at M = 1: one m16 tile a warp).
  EXPECT_THAT(
      Schedule({.M = 1, .N = 8192, .K = 8192}, Target::sm90a(), true),
      HasSubstr("gemm acc_step += A_shared * W_shared: wgmma (M = 16 padded "
                "to 128 rows), warps 8x1"));
  EXPECT_THAT(
      Schedule({.M = 256, .N = 8192, .K = 8192}, Target::sm80(), true),
      HasSubstr("gemm acc_step += A_shared * W_shared: mma.sync, warps 4x2"));
}

}  // namespace
}  // namespace tessel::samples
