// The varlen flash backward (samples/flash_attention_varlen_bwd.h) on the
// interpreter against the float64 gradients per sequence: empty sequences,
// one token, lengths that are not multiples of the tiles, tokens of no
// sequence after the last one (their gradients must stay at the sentinel),
// causal and full, grouped heads, the default tile and the sm_90 one; a
// kernel handed offsets off by one fails the check; the sm_90a lowering
// takes the TMA + warp-specialized path on wgmma and NVRTC compiles it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/execute.h"
#include "samples/flash_attention_bwd.h"
#include "samples/flash_attention_varlen_bwd.h"
#include "src/runtime/lower.h"
#include "tests/common/count.h"

namespace tessel::samples {
namespace {

using testing::Count;

const std::vector<int> kRagged = {0, 1, 17, 300, 0, 64, 65};

std::string Name(const FlashAttentionBackwardConfig& c) {
  return absl::StrCat("H", c.H, " Hkv", c.heads_kv, " D", c.D, " bm", c.block_m,
                      c.causal ? " causal" : " full");
}

// Runs w on the interpreter; whether its outputs match the reference.
bool Matches(Workload& w, std::string* report) {
  absl::Status run = Execute(w, {.backend = Backend::kCpu}).status();
  if (!run.ok()) {
    *report = run.ToString();
    return false;
  }
  absl::StatusOr<CheckResult> check = CheckOutputs(w);
  if (!check.ok()) {
    *report = check.status().ToString();
    return false;
  }
  *report = check->report;
  return check->ok;
}

std::vector<FlashAttentionBackwardConfig> Configs() {
  std::vector<FlashAttentionBackwardConfig> out;
  for (bool causal : {false, true}) {
    out.push_back({.H = 2, .D = 64, .causal = causal});
    out.push_back({.H = 4, .D = 128, .heads_kv = 2, .causal = causal});
    // The sm_90 tile and schedule (128 keys, two consumer warpgroups, the
    // mask on the ragged / diagonal steps only).
    out.push_back(WithDeviceTile(
        FlashAttentionBackwardConfig{.H = 2, .D = 128, .causal = causal},
        /*sm=*/90));
  }
  return out;
}

TEST(FlashAttentionVarlenBackward, MatchesFloat64ReferencePerSequence) {
  for (const FlashAttentionBackwardConfig& c : Configs()) {
    absl::StatusOr<Workload> w =
        FlashAttentionVarlenBackwardWorkload(c, kRagged, 41, /*pad=*/3);
    ASSERT_TRUE(w.ok()) << w.status();
    std::string report;
    EXPECT_TRUE(Matches(*w, &report)) << Name(c) << "\n" << report;
  }
}

TEST(FlashAttentionVarlenBackward, AfterTheVarlenForward) {
  for (bool causal : {false, true}) {
    const FlashAttentionConfig f{.H = 2, .D = 64, .causal = causal};
    const FlashAttentionBackwardConfig b = BackwardOf(f);
    absl::StatusOr<Workload> w =
        FlashAttentionVarlenBackwardWorkload(b, {1, 17, 130}, 42, 2, &f);
    ASSERT_TRUE(w.ok()) << w.status();
    std::string report;
    EXPECT_TRUE(Matches(*w, &report)) << Name(b) << "\n" << report;
    EXPECT_NE(report.find("LSE"), std::string::npos) << report;
  }
}

// The step `step` reads offsets shifted by `by` (every one but the first):
// the check, whose reference keeps the true ones, must fail.
TEST(FlashAttentionVarlenBackward, OffsetsOffByOneFailTheCheck) {
  for (int step : {0, 1}) {
    for (int by : {-1, 1}) {
      const FlashAttentionBackwardConfig c{.H = 2, .D = 64, .causal = true};
      absl::StatusOr<Workload> w =
          FlashAttentionVarlenBackwardWorkload(c, {17, 64, 40}, 43, 2);
      ASSERT_TRUE(w.ok()) << w.status();
      HostTensor shifted = w->tensors.at("cu_seqlens");
      for (int64_t b = 1; b < shifted.num_elements(); ++b)
        shifted.set_flat_int(b, shifted.get_flat_int(b) + by);
      w->tensors["cu_shifted"] = std::move(shifted);
      bool replaced = false;
      for (Arg& a : w->steps[step].args) {
        if (a.name == "cu_seqlens") a.name = "cu_shifted", replaced = true;
      }
      ASSERT_TRUE(replaced);
      std::string report;
      EXPECT_FALSE(Matches(*w, &report))
          << "step " << step << " offsets " << by << "\n"
          << report;
    }
  }
}

TEST(FlashAttentionVarlenBackward, Sm90aIsWarpSpecializedOnWgmmaAndCompiles) {
  for (bool causal : {false, true}) {
    for (int D : {64, 128}) {
      const FlashAttentionBackwardConfig c =
          WithDeviceTile(FlashAttentionBackwardConfig{.B = 3,
                                                      .S = 300,
                                                      .H = 4,
                                                      .D = D,
                                                      .heads_kv = 2,
                                                      .causal = causal},
                         90);
      absl::StatusOr<Program> p = FlashAttentionVarlenBackwardProgram(c);
      ASSERT_TRUE(p.ok()) << p.status();
      absl::StatusOr<runtime::Lowered> l =
          runtime::Lower(p->ir(), {.target = Target::sm90a()});
      ASSERT_TRUE(l.ok()) << l.status();
      const std::string& src = l->generated.source.text;
      EXPECT_GT(Count(src, "tl::tma_load("), 0) << Name(c);
      EXPECT_GT(Count(src, "setmaxnreg_inc"), 0) << Name(c);
      EXPECT_EQ(Count(src, "cp_async_commit"), 0) << Name(c);
      EXPECT_EQ(Count(src, "tl::mma_m16n8k16"), 0) << Name(c);
      EXPECT_EQ(Count(src, "tl::wgmma_commit()"), 5) << Name(c);
      absl::StatusOr<Workload> w =
          FlashAttentionVarlenBackwardWorkload(c, {1, 17, 300}, 44);
      ASSERT_TRUE(w.ok()) << w.status();
      absl::StatusOr<std::string> cache = CompileSteps(*w, Target::sm90a());
      EXPECT_TRUE(cache.ok()) << Name(c) << ": " << cache.status();
    }
  }
}

}  // namespace
}  // namespace tessel::samples
