// samples/flash_attention_fp8 on the GPU against float64 attention of the
// dequantized inputs (P rounded to e4m3 as the kernel's P V sees it): ragged
// sequences (a partial last key block and query tile), causal and not, D 128
// and 256, several heads and batches with distinct descales, and a sequence
// shorter than one tile. Skips, saying why, without a GPU or off sm_90.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "absl/strings/match.h"
#include "samples/execute.h"
#include "samples/flash_attention_fp8.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

void PrintTo(const Fp8FlashAttentionConfig& c, std::ostream* os) {
  *os << c.B << "x" << c.S << "x" << c.H << "x" << c.D
      << (c.causal ? " causal" : "");
}

class Fp8FlashAttentionGpu
    : public ::testing::TestWithParam<Fp8FlashAttentionConfig> {
 protected:
  void SetUp() override { TESSEL_SKIP_WITHOUT_GPU(); }
};

TEST_P(Fp8FlashAttentionGpu, MatchesFloat64) {
  absl::StatusOr<Workload> w = Fp8FlashAttentionWorkload(GetParam(), 11);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kGpu});
  if (!run.ok() && absl::IsFailedPrecondition(run.status()) &&
      absl::StrContains(run.status().message(), "built for sm_90a only"))
    GTEST_SKIP() << run.status();
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok) << w->shape << "\n" << check->report;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp8FlashAttentionGpu,
    ::testing::Values(
        Fp8FlashAttentionConfig{.B = 1, .S = 128, .H = 1, .D = 128},
        Fp8FlashAttentionConfig{.B = 1, .S = 1000, .H = 2, .D = 128},
        Fp8FlashAttentionConfig{
            .B = 1, .S = 1000, .H = 2, .D = 128, .causal = true},
        Fp8FlashAttentionConfig{
            .B = 2, .S = 37, .H = 3, .D = 128, .causal = true},
        Fp8FlashAttentionConfig{.B = 2, .S = 300, .H = 1, .D = 256},
        Fp8FlashAttentionConfig{
            .B = 1, .S = 777, .H = 2, .D = 256, .causal = true},
        Fp8FlashAttentionConfig{
            .B = 1, .S = 4097, .H = 1, .D = 128, .causal = true}),
    [](const auto& info) {
      const Fp8FlashAttentionConfig& c = info.param;
      return "B" + std::to_string(c.B) + "_S" + std::to_string(c.S) + "_H" +
             std::to_string(c.H) + "_D" + std::to_string(c.D) +
             (c.causal ? "_causal" : "");
    });

}  // namespace
}  // namespace tessel::samples
