// samples/flash_attention_fp8: the interpreter against float64 at ragged S,
// causal and full, D128 and D256 (and a wrong descale fails the same
// check); bad D refused at the caller's line; the sm_80 factory refusal;
// on sm_90a both gemms are e4m3 wgmma under a TMA producer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <source_location>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/flash_attention_fp8.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Fp8FlashAttention, MatchesFloat64AtRaggedS) {
  for (bool causal : {false, true}) {
    for (const Fp8FlashAttentionConfig& shape :
         {Fp8FlashAttentionConfig{.B = 1, .S = 300, .H = 2, .D = 128},
          Fp8FlashAttentionConfig{.B = 2, .S = 130, .H = 1, .D = 256}}) {
      Fp8FlashAttentionConfig c = shape;
      c.causal = causal;
      absl::StatusOr<Workload> w = Fp8FlashAttentionWorkload(c, 3);
      ASSERT_TRUE(w.ok()) << w.status();
      ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
      absl::StatusOr<CheckResult> check = CheckOutputs(*w);
      ASSERT_TRUE(check.ok()) << check.status();
      EXPECT_TRUE(check->ok) << w->shape << "\n" << check->report;
    }
  }
}

TEST(Fp8FlashAttention, TheCheckCatchesAWrongDescale) {
  absl::StatusOr<Workload> w =
      Fp8FlashAttentionWorkload({.B = 1, .S = 200, .H = 2, .D = 128}, 4);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  // The reference with the two heads' descale_v swapped.
  HostTensor& dv = w->tensors.at("descale_v");
  const double first = dv.get_flat(0);
  dv.set_flat(0, dv.get_flat(1));
  dv.set_flat(1, first);
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
}

TEST(Fp8FlashAttention, RefusesOtherHeadDimsAtTheCallersLine) {
  const std::source_location here = std::source_location::current();
  absl::StatusOr<Program> p =
      Fp8FlashAttentionProgram({.S = 128, .D = 64}, here);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              HasSubstr(absl::StrCat("flash_attention_fp8_test.cc:",
                                     here.line(), ": flash_attention_fp8")));
  EXPECT_THAT(p.status().message(), HasSubstr("D=64 must be 128 or 256"));
}

TEST(Fp8FlashAttention, TheFactoriesBuildForSm90aOnly) {
  const nlohmann::json params = {{"B", 1}, {"S", 256}, {"H", 2}, {"D", 128}};
  for (const char* kernel : {"flash_attention_fp8", "fp8_transpose_v"}) {
    EXPECT_TRUE(
        KernelRegistry::Global().Build(kernel, params, Target::sm90a()).ok());
    absl::StatusOr<Program> sm80 =
        KernelRegistry::Global().Build(kernel, params, Target::sm80());
    EXPECT_EQ(sm80.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(sm80.status().message(), HasSubstr("built for sm_90a only"));
  }
}

TEST(Fp8FlashAttention, Sm90aIsWarpSpecializedE4m3Wgmma) {
  for (int d : {128, 256}) {
    absl::StatusOr<Program> p = Fp8FlashAttentionProgram(
        {.B = 4, .S = 4096, .H = 16, .D = d, .causal = true});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string s = absl::StrJoin(k->schedule(), "\n");
    EXPECT_THAT(s, HasSubstr("gemm acc_o += P_shared * Vt_shared: wgmma"));
    EXPECT_THAT(s, HasSubstr("B descriptor (K-major)"));
    EXPECT_THAT(s, HasSubstr("warp-specialized: 128 TMA producer threads, "
                             "256 consumer threads"));
    EXPECT_THAT(s, HasSubstr(absl::StrCat("Vt_tma box [1, 1, ", d, ", 128]")));
    EXPECT_THAT(s, Not(HasSubstr("fma")));
  }
}

}  // namespace
}  // namespace tessel::samples
