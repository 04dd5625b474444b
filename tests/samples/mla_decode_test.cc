// mla_decode's default tile (64 heads, 256 threads) on sm_90a: the two
// consumer warpgroups split N (FlashMLA's layout), both gemms on wgmma.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "samples/mla_decode.h"
#include "tessel/compile.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

TEST(MlaDecode, Sm90aDefaultSplitsNOverTwoWarpgroups) {
  // 64 rows of S and O over two warpgroups: each holds S [64, bn / 2] and
  // O [64, 256]; S's row max and sum meet through shared memory, P goes
  // through shared memory to both (the A operand of P V, every row).
  absl::StatusOr<Program> p = MlaDecodeProgram({.B = 4, .max_pages = 64});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  std::string s;
  for (const std::string& line : k->schedule()) s += line + "\n";
  EXPECT_THAT(s, HasSubstr("gemm acc_s += Q_shared * KV_shared: wgmma, "
                           "warps 4x2, warp tile 16x16 (1x2 tiles), 36 k16 "
                           "steps, A descriptor"));
  EXPECT_THAT(s, HasSubstr("gemm acc_o += P_shared * KV_shared: wgmma, "
                           "warps 4x2, warp tile 16x256 (1x32 tiles), 2 k16 "
                           "steps, A ldmatrix, B descriptor (MN-major"));
  EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads, 256 "
                           "consumer threads"));
  EXPECT_THAT(s, ::testing::Not(HasSubstr("mma.sync")));
}

}  // namespace
}  // namespace tessel::samples
