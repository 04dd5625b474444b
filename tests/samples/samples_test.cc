// Every sample on the CPU interpreter against its float64 reference, at
// small and ragged sizes; the samples' error handling, command line parsing
// and registrations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/flash_attention.h"
#include "samples/flash_attention_bwd.h"
#include "samples/flash_attention_varlen.h"
#include "samples/gemm.h"
#include "samples/layernorm.h"
#include "samples/linear_attention.h"
#include "samples/rmsnorm.h"
#include "samples/sample_main.h"
#include "samples/softmax.h"
#include "samples/splitk_gemm.h"
#include "tessel/registry.h"
#include "tests/samples/sample_cases.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

class InterpreterTest : public ::testing::TestWithParam<SampleCase> {};

TEST_P(InterpreterTest, MatchesFloat64Reference) {
  absl::StatusOr<Workload> w = GetParam().make();
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kCpu});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->backend, Backend::kCpu);
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok) << check->report;
}

INSTANTIATE_TEST_SUITE_P(Samples, InterpreterTest,
                         ::testing::ValuesIn(SmallCases()),
                         [](const auto& info) { return info.param.name; });

// The check is not vacuous: a wrong element is reported with its index.
TEST(CheckOutputs, ReportsAWrongElementByIndex) {
  absl::StatusOr<Workload> w = GemmWorkload({.M = 64, .N = 64, .K = 32});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  w->tensors["C"].set({5, 7}, w->tensors["C"].at({5, 7}) + 1.0);
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->ok);
  EXPECT_THAT(check->report, HasSubstr("[5, 7]"));
}

// The atomics add into whatever is there: without the host wrapper's
// zeroing step the split-K result is wrong (the tensor starts at 7).
TEST(SplitKGemm, NeedsTheZeroingStep) {
  absl::StatusOr<Workload> w =
      SplitKGemmWorkload({.M = 64, .N = 64, .K = 128, .split_k = 2});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->steps.size(), 2u);
  w->steps.erase(w->steps.begin());
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check->ok);
}

TEST(LinearAttention, BackwardWrapperZeroesKernelCasts) {
  // Tiles of 32: every gradient is a sum over two tiles.
  absl::StatusOr<Workload> w = LinearAttentionBackwardWorkload({.B = 1,
                                                                .S = 64,
                                                                .H = 1,
                                                                .DK = 64,
                                                                .DV = 64,
                                                                .block_k = 32,
                                                                .block_v = 32});
  ASSERT_TRUE(w.ok()) << w.status();
  // 3 zero, the two sweeps' kernels (the split form), 3 cast.
  ASSERT_EQ(w->steps.size(), 8u);
  EXPECT_EQ(w->steps[3].program.name(), "linear_attention_bwd_dq");
  EXPECT_EQ(w->steps[4].program.name(), "linear_attention_bwd_dkdv");
  for (const char* out : {"dQ", "dK", "dV"}) {
    EXPECT_EQ(w->tensors.at(out).dtype(), f16) << out;
    EXPECT_EQ(w->tensors.at(std::string(out) + "_acc").dtype(), f32) << out;
  }
  // The fused kernel: one step between the wrapper's.
  absl::StatusOr<Workload> fused =
      LinearAttentionBackwardWorkload({.B = 1,
                                       .S = 64,
                                       .H = 1,
                                       .DK = 64,
                                       .DV = 64,
                                       .block_k = 32,
                                       .block_v = 32,
                                       .split_backward = false});
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_EQ(fused->steps.size(), 7u);
  EXPECT_EQ(fused->steps[3].program.name(), "linear_attention_bwd");
}

TEST(LinearAttention, OneTileWritesF16WithoutWrapperSteps) {
  const LinearAttentionConfig c{.B = 1, .S = 64, .H = 1, .DK = 64, .DV = 64};
  absl::StatusOr<Workload> fwd = LinearAttentionForwardWorkload(c);
  ASSERT_TRUE(fwd.ok()) << fwd.status();
  ASSERT_EQ(fwd->steps.size(), 1u);
  EXPECT_EQ(fwd->tensors.count("O_acc"), 0u);
  absl::StatusOr<Workload> bwd = LinearAttentionBackwardWorkload(c);
  ASSERT_TRUE(bwd.ok()) << bwd.status();
  ASSERT_EQ(bwd->steps.size(), 2u);  // the two sweeps
  for (const Step& step : bwd->steps) EXPECT_EQ(step.args.size(), 7u);
  // One DK tile but two DV tiles: dV direct, dQ and dK added in f32.
  absl::StatusOr<Workload> mixed = LinearAttentionBackwardWorkload(
      {.B = 1, .S = 64, .H = 1, .DK = 64, .DV = 64, .block_v = 32});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->steps.size(), 6u);  // 2 zero, 2 sweeps, 2 cast
  EXPECT_EQ(mixed->tensors.count("dV_acc"), 0u);
  EXPECT_EQ(mixed->tensors.at("dQ_acc").dtype(), f32);
}

TEST(LinearAttention, MbarrierVariantHasTheSeedsBarriers) {
  absl::StatusOr<Program> p = LinearAttentionForwardMbarrierProgram(
      {.B = 1, .S = 128, .H = 1, .DK = 64, .DV = 64});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = p->to_string();
  EXPECT_THAT(text, HasSubstr("mbarrier_arrive"));
  EXPECT_THAT(text, HasSubstr("mbarrier_wait_parity"));
  EXPECT_THAT(text, HasSubstr("num_stages=2"));
  PassConfig config = LinearAttentionMbarrierPassConfig();
  EXPECT_TRUE(config.disable_tma_lower);
  EXPECT_TRUE(config.disable_warp_specialized);
}

TEST(Builders, RejectBadConfigs) {
  EXPECT_EQ(GemmProgram({.M = 0, .N = 8, .K = 8}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      GemmProgram({.M = 8, .N = 8, .K = 8, .in_dtype = f32}).status().message(),
      HasSubstr("f16, bf16, fp8_e4m3 or fp8_e5m2"));
  EXPECT_THAT(GemmProgram({.M = 8, .N = 8, .K = 8, .out_dtype = i32})
                  .status()
                  .message(),
              HasSubstr("output"));
  // Tensor-core tiles are issued by whole warps.
  EXPECT_THAT(GemmProgram({.M = 64, .N = 64, .K = 64, .tile = {.threads = 33}})
                  .status()
                  .message(),
              HasSubstr("threads=33 must be a multiple of 32"));
  EXPECT_THAT(
      SplitKGemmProgram({.M = 64, .N = 64, .K = 64, .tile = {.threads = 48}})
          .status()
          .message(),
      HasSubstr("threads=48 must be a multiple of 32"));
  EXPECT_THAT(LinearAttentionForwardProgram({.threads = 40}).status().message(),
              HasSubstr("threads=40 must be a multiple of 32"));
  EXPECT_EQ(
      SplitKGemmProgram({.M = 8, .N = 8, .K = 8, .split_k = 0}).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(LinearAttentionBackwardProgram(
                  {.B = 1000, .S = 64, .H = 1000, .DK = 64, .DV = 64})
                  .status()
                  .message(),
              HasSubstr("65535"));
  EXPECT_EQ(FlashAttentionProgram({.B = 1, .S = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(FlashAttentionProgram({.H = 4, .heads_kv = 3}).status().message(),
              HasSubstr("heads_kv=3 must divide H=4"));
  EXPECT_THAT(
      FlashAttentionBackwardProgram({.H = 4, .heads_kv = 3}).status().message(),
      HasSubstr("heads_kv=3 must divide H=4"));
  // D = 40: refused up front by all three, not by the lowering.
  EXPECT_THAT(FlashAttentionProgram({.D = 40}).status().message(),
              HasSubstr("D=40 must be a multiple of 16"));
  EXPECT_THAT(FlashAttentionVarlenProgram({.D = 40}).status().message(),
              HasSubstr("D=40 must be a multiple of 16"));
  EXPECT_THAT(FlashAttentionBackwardProgram({.D = 40}).status().message(),
              HasSubstr("D=40 must be a multiple of 16"));
  EXPECT_EQ(FlashAttentionBackwardPreprocessProgram({.D = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(FlashAttentionForwardBackwardWorkload({.H = 2}, {.H = 4})
                  .status()
                  .message(),
              HasSubstr("differ"));
  EXPECT_THAT(
      FlashAttentionVarlenProgram({.H = 4, .heads_kv = 3}).status().message(),
      HasSubstr("heads_kv=3 must divide H=4"));
  EXPECT_EQ(FlashAttentionVarlenWorkload({}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // An empty sequence is valid (it owns no tokens); a negative one is not.
  EXPECT_TRUE(FlashAttentionVarlenWorkload({}, {5, 0}).ok());
  EXPECT_THAT(FlashAttentionVarlenWorkload({}, {5, -1}).status().message(),
              HasSubstr("sequence length -1"));
  EXPECT_THAT(ParseSeqlens("1,17,x").status().message(),
              HasSubstr("--varlen=1,17,x"));
  EXPECT_EQ(ParseSeqlens("1,-3").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseSeqlens("1,17,300"), (std::vector<int>{1, 17, 300}));
  EXPECT_EQ(*ParseSeqlens("0,1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(RmsNormProgram({.M = 4, .N = 4, .dtype = i8}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SoftmaxProgram({.M = 4, .N = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LayerNormProgram({.M = 4, .N = 4, .dtype = i8}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LayerNormProgram({.M = 4, .N = 4, .eps = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GemmLayouts, ParseAndName) {
  for (const char* name : {"NN", "NT", "TN", "TT"}) {
    absl::StatusOr<GemmLayout> l = ParseGemmLayout(name);
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_EQ(GemmLayoutName(*l), name);
  }
  EXPECT_TRUE(ParseGemmLayout("nt").ok());
  EXPECT_THAT(ParseGemmLayout("XY").status().message(), HasSubstr("NN, NT"));
}

TEST(ParseDims, PositionalAndNamed) {
  auto d = ParseDims("64x32x16", {"M", "N", "K"});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)["M"], 64);
  EXPECT_EQ((*d)["K"], 16);
  d = ParseDims("K=5,M=7,N=9", {"M", "N", "K"});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)["N"], 9);
  EXPECT_THAT(ParseDims("64x32", {"M", "N", "K"}).status().message(),
              HasSubstr("MxNxK"));
  EXPECT_THAT(ParseDims("M=1,N=2", {"M", "N", "K"}).status().message(),
              HasSubstr("K is missing"));
  EXPECT_THAT(ParseDims("M=1,N=2,Q=3", {"M", "N", "K"}).status().message(),
              HasSubstr("unknown dimension"));
  EXPECT_FALSE(ParseDims("0x1x1", {"M", "N", "K"}).ok());
  EXPECT_FALSE(ParseDims("99999999999x1x1", {"M", "N", "K"}).ok());
}

TEST(Flags, UnknownAndMalformed) {
  const char* argv[] = {"gemm", "--size", "small", "--blok-m=4", "--check"};
  absl::StatusOr<Flags> f = Flags::Parse(5, const_cast<char**>(argv));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->String("size", ""), "small");
  EXPECT_TRUE(*f->Bool("check", false));
  EXPECT_THAT(f->CheckAllUsed().message(), HasSubstr("--blok-m"));
  Flags g = Flags::FromMap({{"block-m", "x"}, {"dtype", "f17"}});
  EXPECT_FALSE(g.Int("block-m", 0).ok());
  EXPECT_THAT(g.Dtype("dtype", f16).status().message(), HasSubstr("f17"));
  const char* bad[] = {"gemm", "small"};
  EXPECT_FALSE(Flags::Parse(2, const_cast<char**>(bad)).ok());
}

TEST(Flags, IntsOverrideOnlyTheFlagsGiven) {
  Flags f = Flags::FromMap({{"block-m", "64"}, {"stages", "2"}});
  int block_m = 128, block_n = 256, stages = 3;
  ASSERT_TRUE(
      f.Ints(
           {{"block-m", &block_m}, {"block-n", &block_n}, {"stages", &stages}})
          .ok());
  EXPECT_EQ(block_m, 64);
  EXPECT_EQ(block_n, 256);  // not given: the default stays
  EXPECT_EQ(stages, 2);
  EXPECT_TRUE(f.CheckAllUsed().ok());
  Flags bad = Flags::FromMap({{"threads", "many"}});
  int threads = 128;
  EXPECT_THAT(bad.Ints({{"threads", &threads}}).message(),
              HasSubstr("--threads"));
  EXPECT_EQ(threads, 128);
  // An int flag does not wrap into its field.
  Flags wide = Flags::FromMap({{"block-m", "4294967360"}});
  EXPECT_THAT(wide.Ints({{"block-m", &block_m}}).message(),
              HasSubstr("--block-m: 4294967360 is out of range"));
  EXPECT_EQ(block_m, 64);
}

TEST(Flags, OneOfNamesTheChoices) {
  Flags f = Flags::FromMap({{"causal", "maybe"}, {"pass", "bwd"}});
  absl::StatusOr<std::string> causal =
      f.OneOf("causal", {"true", "false", "both"}, "both");
  ASSERT_FALSE(causal.ok());
  EXPECT_EQ(causal.status().message(),
            "--causal=maybe: expected true, false or both");
  EXPECT_EQ(*f.OneOf("pass", {"fwd", "bwd"}, "fwd"), "bwd");
  EXPECT_EQ(*f.OneOf("layout", {"NN", "NT"}, "NN"), "NN");
}

// "--json" alone has no file name to give; "--causal" alone means true
// where the sample says so; "--json x" and "--json=x" both take x.
TEST(Flags, AFlagWithoutItsValue) {
  const char* argv[] = {"gemm", "--json", "--causal", "--check"};
  absl::StatusOr<Flags> f = Flags::Parse(4, const_cast<char**>(argv));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->String("json", ""), "");
  EXPECT_EQ(f->String("causal", "both", /*bare=*/"true"), "true");
  EXPECT_TRUE(*f->Bool("check", false));
  EXPECT_THAT(f->CheckAllUsed().message(), HasSubstr("--json needs a value"));
  const char* given[] = {"gemm", "--json", "out.json", "--arch=sm_80"};
  f = Flags::Parse(4, const_cast<char**>(given));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->String("json", ""), "out.json");
  EXPECT_EQ(f->String("arch", ""), "sm_80");
  EXPECT_TRUE(f->CheckAllUsed().ok());
}

TEST(Registry, EverySampleIsRegisteredAndBuilds) {
  const KernelRegistry& r = KernelRegistry::Global();
  const std::pair<const char*, nlohmann::json> kernels[] = {
      {"gemm", {{"M", 256}, {"N", 128}, {"K", 64}, {"layout", "NT"}}},
      {"gemm", {{"M", 256}, {"N", 128}, {"K", 64}, {"bias_relu", true}}},
      {"splitk_gemm", {{"M", 64}, {"N", 64}, {"K", 512}, {"split_k", 4}}},
      {"linear_attention_fwd", {{"B", 1}, {"S", 128}, {"H", 2}, {"DK", 64}}},
      {"linear_attention_fwd_mbarrier",
       {{"B", 1}, {"S", 128}, {"H", 2}, {"DK", 64}}},
      {"linear_attention_bwd", {{"B", 1}, {"S", 128}, {"H", 2}, {"DK", 64}}},
      {"flash_attention",
       {{"B", 1}, {"S", 128}, {"H", 2}, {"D", 64}, {"causal", true}}},
      {"flash_attention",
       {{"B", 1},
        {"S", 128},
        {"H", 4},
        {"D", 64},
        {"heads_kv", 2},
        {"lse", true}}},
      {"flash_attention_bwd",
       {{"B", 1},
        {"S", 128},
        {"H", 4},
        {"D", 64},
        {"heads_kv", 2},
        {"causal", true}}},
      {"flash_attention_bwd_preprocess",
       {{"B", 1}, {"S", 128}, {"H", 2}, {"D", 64}}},
      {"flash_attention_varlen",
       {{"B", 3}, {"S", 300}, {"H", 4}, {"D", 64}, {"heads_kv", 2}}},
      {"rmsnorm", {{"M", 64}, {"N", 512}}},
      {"softmax", {{"M", 64}, {"N", 512}, {"dtype", "bf16"}}},
      {"layernorm", {{"M", 64}, {"N", 512}, {"residual", true}}},
      {"decode_attention",
       {{"B", 4}, {"H", 8}, {"heads_kv", 2}, {"D", 64}, {"max_pages", 8}}},
      {"decode_attention_combine",
       {{"B", 4},
        {"H", 8},
        {"heads_kv", 2},
        {"D", 64},
        {"max_pages", 8},
        {"splits", 3}}},
      {"mla_decode", {{"B", 2}, {"H", 64}, {"max_pages", 4}}},
      {"zero_tensor", {{"n", 1000}}},
      {"cast_tensor", {{"n", 1000}, {"from", "f32"}, {"to", "bf16"}}},
  };
  for (const auto& [name, params] : kernels) {
    ASSERT_TRUE(r.Contains(name)) << name;
    absl::StatusOr<Program> p = r.Build(name, params);
    EXPECT_TRUE(p.ok()) << name << ": " << p.status();
  }
  EXPECT_THAT(r.Build("gemm", {{"M", 64}, {"N", 64}, {"K", 64}, {"blok_m", 64}})
                  .status()
                  .message(),
              HasSubstr("blok_m"));
  EXPECT_THAT(r.Build("gemm", {{"M", 64}, {"N", 64}}).status().message(),
              HasSubstr("K"));
}

}  // namespace
}  // namespace tessel::samples
