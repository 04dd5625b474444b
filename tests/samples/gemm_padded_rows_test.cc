// The GEMM sample's padded operand rows (gemm_padded_rows.h), without a GPU:
// which operands are padded, the copy steps ahead of the gemm, their values
// on the interpreter against float64, and that the padded 4095x4097x4096 NN
// gemm takes the warp-specialized TMA kernel on sm_90a.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/gemm.h"
#include "samples/gemm_padded_rows.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

GemmConfig Padded(int M, int N, int K, GemmLayout layout = GemmLayout::kNN) {
  GemmConfig c{.M = M, .N = N, .K = K, .layout = layout};
  c.tile.pad_rows = true;
  return c;
}

TEST(GemmPaddedRows, OnlyUnalignedRowsArePadded) {
  // NN: A's rows are K long, B's N.
  GemmConfig c = Padded(4095, 4097, 4096);
  EXPECT_EQ(GemmPaddedCols(c, 'A'), 4096);
  EXPECT_EQ(GemmPaddedCols(c, 'B'), 4104);
  EXPECT_FALSE(GemmPadsOperand(c, 'A'));
  EXPECT_TRUE(GemmPadsOperand(c, 'B'));
  // NT: B stored [N, K], its rows aligned.
  c.layout = GemmLayout::kNT;
  EXPECT_FALSE(GemmPadsOperand(c, 'B'));
  // TN: A stored [K, M], 4095 columns.
  c.layout = GemmLayout::kTN;
  EXPECT_EQ(GemmPaddedCols(c, 'A'), 4096);
  // fp8: 16 one-byte elements a 16-byte row step.
  c = Padded(64, 72, 64, GemmLayout::kNT);
  c.in_dtype = fp8_e4m3;
  EXPECT_EQ(GemmPaddedCols(c, 'B'), 64);
  c.layout = GemmLayout::kNN;
  EXPECT_EQ(GemmPaddedCols(c, 'B'), 80);
  // Off: nothing padded.
  c.tile.pad_rows = false;
  EXPECT_EQ(GemmPaddedCols(c, 'B'), 72);
}

TEST(GemmPaddedRows, TheTableSetsItOnHopperOnly) {
  EXPECT_TRUE(DefaultGemmTile(90, f16, 4095, 4097, 4096).pad_rows);
  EXPECT_TRUE(DefaultGemmTile(90, f16, 1000, 1000, 1000).pad_rows);
  EXPECT_TRUE(DefaultGemmTile(90).pad_rows);
  EXPECT_FALSE(DefaultGemmTile(80, f16, 4095, 4097, 4096).pad_rows);
}

TEST(GemmPaddedRows, CopiesRunAheadOfTheGemmAndMatchFloat64) {
  for (GemmLayout layout :
       {GemmLayout::kNN, GemmLayout::kNT, GemmLayout::kTN, GemmLayout::kTT}) {
    SCOPED_TRACE(GemmLayoutName(layout));
    // 45, 51 and 67 columns: both operands unaligned in every layout.
    GemmConfig c = Padded(67, 45, 51, layout);
    c.tile.block_m = c.tile.block_n = 64;
    absl::StatusOr<Workload> w = GemmWorkload(c);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_EQ(w->steps.size(), 3u);
    EXPECT_EQ(w->main_step, 2);
    EXPECT_EQ(w->steps[0].program.name(), "gemm_pad_rows");
    EXPECT_EQ(w->steps[1].program.name(), "gemm_pad_rows");
    EXPECT_EQ(w->steps[2].args[0].name, "A_padded");
    EXPECT_EQ(w->steps[2].args[1].name, "B_padded");
    ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
    absl::StatusOr<CheckResult> check = CheckOutputs(*w);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_TRUE(check->ok);
    // The padding the gemm reads past K is zeros.
    const HostTensor& a = w->tensors.at("A_padded");
    const int64_t stored = GemmStoredCols(c, 'A');
    for (int64_t r = 0; r < a.shape()[0]; ++r)
      for (int64_t j = stored; j < a.shape()[1]; ++j)
        ASSERT_EQ(a.get_flat(r * a.shape()[1] + j), 0.0);
  }
}

TEST(GemmPaddedRows, WithoutTheCopiesTheCheckFails) {
  // The gemm then reads the zeroed workspaces: C is wrong, and seen so.
  absl::StatusOr<Workload> w = GemmWorkload(Padded(67, 45, 51));
  ASSERT_TRUE(w.ok()) << w.status();
  w->steps.erase(w->steps.begin(), w->steps.begin() + 2);
  w->main_step = 0;
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
}

TEST(GemmPaddedRows, SplitKReadsThePaddedCopies) {
  GemmConfig c = Padded(70, 50, 600);
  c.tile.block_m = c.tile.block_n = 64;
  c.tile.split_k = 3;
  absl::StatusOr<Workload> w = GemmWorkload(c);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->steps.size(), 3u);  // B's copy, the slices, the reduce
  EXPECT_EQ(w->main_step, 1);
  EXPECT_EQ(w->steps[1].args[1].name, "B_padded");
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok);
}

TEST(GemmPaddedRows, PaddedNnIsTheWarpSpecializedTmaKernel) {
  for (bool pad : {false, true}) {
    GemmConfig c = Padded(4095, 4097, 4096);
    c.tile = DefaultGemmTile(90, f16, c.M, c.N, c.K);
    c.tile.pad_rows = pad;
    absl::StatusOr<Program> p = GemmProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string s = absl::StrJoin(k->schedule(), "\n");
    if (pad) {
      EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads"))
          << s;
      EXPECT_THAT(s, HasSubstr("persistent grid")) << s;
    } else {
      // What it was: B's unaligned rows keep the TMA off.
      EXPECT_THAT(s, Not(HasSubstr("warp-specialized: 128 TMA"))) << s;
    }
  }
}

TEST(GemmPaddedRows, BadSizesAreRefused) {
  EXPECT_THAT(PadRowsProgram(4, 10, 8, f16).status().message(),
              HasSubstr("padded_cols >= cols"));
  EXPECT_FALSE(PadRowsProgram(0, 8, 8, f16).ok());
  EXPECT_TRUE(
      KernelRegistry::Global()
          .Build("gemm_pad_rows",
                 {{"rows", 4096}, {"cols", 4097}, {"padded_cols", 4104}})
          .ok());
  EXPECT_TRUE(
      KernelRegistry::Global()
          .Build("gemm",
                 {{"M", 4095}, {"N", 4097}, {"K", 4096}, {"pad_rows", true}})
          .ok());
}

}  // namespace
}  // namespace tessel::samples
