// Every kernel of every sample (host-wrapper helpers included) goes through
// the scheduler, the CUDA codegen and NVRTC for sm_80 and sm_90a, and for
// sm_90a with disable_tma_lower and disable_warp_specialized set, without a
// GPU. Kernels the codegen cannot build yet are listed in kNotYetSupported
// with the error they must give: such a test passes while the codegen still
// fails that way and fails (asking for the entry to go) once it compiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "samples/execute.h"
#include "samples/flash_attention.h"
#include "samples/gemm.h"
#include "samples/layernorm.h"
#include "samples/linear_attention.h"
#include "samples/rmsnorm.h"
#include "samples/softmax.h"
#include "samples/splitk_gemm.h"
#include "src/runtime/lower.h"
#include "tests/samples/sample_cases.h"

namespace tessel::samples {
namespace {

class CompileTest
    : public ::testing::TestWithParam<std::tuple<SampleCase, const char*>> {};

// The third "arch": sm_90a with both Hopper pass configs set.
constexpr char kSm90aFlags[] = "sm_90a, no TMA, no warp specialization";

TEST_P(CompileTest, CompilesWithNvrtc) {
  auto [c, arch_name] = GetParam();
  absl::StatusOr<Workload> w = c.make();
  ASSERT_TRUE(w.ok()) << w.status();
  std::string arch = arch_name;
  if (arch == kSm90aFlags) {
    arch = "sm_90a";
    for (Step& step : w->steps) {
      step.pass_config.disable_tma_lower = true;
      step.pass_config.disable_warp_specialized = true;
    }
  }
  absl::StatusOr<std::string> cache = CompileSteps(*w, Target::cuda(arch));
  if (const KnownGap* gap = FindCodegenGap(c.name, arch)) {
    ASSERT_FALSE(cache.ok())
        << c.name << " now compiles for " << arch
        << ": remove its kNotYetSupported entry (" << gap->missing << ")";
    EXPECT_THAT(std::string(cache.status().message()),
                ::testing::HasSubstr(gap->error));
    GTEST_SKIP() << "expected failure, the codegen lacks " << gap->missing
                 << ": " << cache.status();
  }
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_FALSE(cache->empty());
}

INSTANTIATE_TEST_SUITE_P(Samples, CompileTest,
                         ::testing::Combine(::testing::ValuesIn(SmallCases()),
                                            ::testing::Values("sm_80", "sm_90a",
                                                              kSm90aFlags)),
                         [](const auto& info) {
                           std::string arch = std::get<1>(info.param);
                           return std::get<0>(info.param).name + "_" +
                                  (arch == "sm_80"    ? "sm80"
                                   : arch == "sm_90a" ? "sm90a"
                                                      : "sm90a_cp_async");
                         });

// The chunk loops are software-pipelined: each pipelined loop commits a
// cp.async group in its prologue and in its steady state, a serial one
// only in its body (the cp.async path: warp specialization off).
int CountMatches(const Program& p, const std::string& what,
                 PassConfig config = {.disable_warp_specialized = true}) {
  absl::StatusOr<runtime::Lowered> l = runtime::Lower(
      p.ir(), {.target = Target::sm90a(), .pass_config = config});
  EXPECT_TRUE(l.ok()) << l.status();
  if (!l.ok()) return -1;
  const std::string& src = l->generated.source.text;
  int n = 0;
  for (size_t at = src.find(what); at != std::string::npos;
       at = src.find(what, at + 1)) {
    ++n;
  }
  return n;
}
int CountCommits(const Program& p) {
  return CountMatches(p, "cp_async_commit");
}

TEST(LinearAttention, ChunkLoopsArePipelined) {
  for (int stages : {2, 3}) {
    LinearAttentionConfig c{.B = 2, .S = 256, .H = 2, .DK = 64, .DV = 64};
    LinearAttentionConfig serial = c;
    c.num_stages = stages;
    serial.num_stages = 1;
    absl::StatusOr<Program> fwd = LinearAttentionForwardProgram(c);
    absl::StatusOr<Program> fwd1 = LinearAttentionForwardProgram(serial);
    absl::StatusOr<Program> bwd = LinearAttentionBackwardProgram(c);
    absl::StatusOr<Program> bwd1 = LinearAttentionBackwardProgram(serial);
    ASSERT_TRUE(fwd.ok() && fwd1.ok() && bwd.ok() && bwd1.ok());
    // Prologue: stages - 1 commits; steady state: one.
    EXPECT_EQ(CountCommits(*fwd), stages) << stages;
    EXPECT_EQ(CountCommits(*bwd), 2 * stages) << stages;
    EXPECT_LT(CountCommits(*fwd1), stages);
    EXPECT_LT(CountCommits(*bwd1), 2 * stages);
    // By default the forward's chunk loop is warp-specialized instead: a
    // TMA producer fills the stages.
    EXPECT_EQ(CountMatches(*fwd, "cp_async_commit", {}), 0) << stages;
    EXPECT_GT(CountMatches(*fwd, "tl::tma_load(", {}), 0) << stages;
  }
}

// The benchmark shapes (what --size bench runs on the H200) fit the
// device: shared memory, registers, grid limits.
TEST(BenchShapes, CompileForSm90a) {
  std::vector<absl::StatusOr<Program>> programs;
  for (DataType t : {f16, bf16}) {
    programs.push_back(GemmProgram(
        {.M = 4096, .N = 4096, .K = 4096, .in_dtype = t, .out_dtype = t}));
  }
  programs.push_back(
      GemmProgram({.M = 4096, .N = 4096, .K = 4096, .bias_relu = true}));
  programs.push_back(
      SplitKGemmProgram({.M = 1024, .N = 1024, .K = 16384, .split_k = 8}));
  for (auto [h, d] : {std::pair{16, 128}, std::pair{32, 64}}) {
    LinearAttentionConfig c{.B = 8, .S = 4096, .H = h, .DK = d, .DV = d};
    programs.push_back(LinearAttentionForwardProgram(c));
    programs.push_back(LinearAttentionBackwardProgram(c));
  }
  for (bool causal : {false, true}) {
    programs.push_back(FlashAttentionProgram(
        {.B = 8, .S = 4096, .H = 16, .D = 128, .causal = causal}));
    // The overlapped forward's device tile: three K / V stages (224 KiB).
    programs.push_back(FlashAttentionProgram(WithDeviceTile({.B = 8,
                                                             .S = 4096,
                                                             .H = 16,
                                                             .D = 128,
                                                             .causal = causal,
                                                             .overlap = true},
                                                            90)));
  }
  programs.push_back(RmsNormProgram({.M = 4096, .N = 8192}));
  programs.push_back(SoftmaxProgram({.M = 4096, .N = 8192}));
  programs.push_back(RmsNormProgram({.M = 16384, .N = 4096, .residual = true}));
  programs.push_back(LayerNormProgram({.M = 4096, .N = 8192}));
  programs.push_back(
      LayerNormProgram({.M = 16384, .N = 4096, .residual = true}));
  // The variants the rows suite of bench/device.py times.
  programs.push_back(RmsNormProgram(
      {.M = 4096, .N = 8192, .grid = 264, .prefetch = true, .w_shared = true}));
  programs.push_back(SoftmaxProgram({.M = 4096, .N = 8192, .grid = 528}));
  programs.push_back(LayerNormProgram({.M = 4096, .N = 8192, .grid = 264}));
  programs.push_back(
      LayerNormProgram({.M = 4096, .N = 8192, .grid = 528, .wb_shared = true}));
  for (const absl::StatusOr<Program>& p : programs) {
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CompiledKernel> k =
        compile(p->ir(), {.target = Target::sm90a()});
    EXPECT_TRUE(k.ok()) << p->name() << ": " << k.status();
  }
  absl::StatusOr<Program> mbarrier = LinearAttentionForwardMbarrierProgram(
      {.B = 8, .S = 4096, .H = 16, .DK = 128, .DV = 128});
  ASSERT_TRUE(mbarrier.ok()) << mbarrier.status();
  EXPECT_TRUE(compile(mbarrier->ir(),
                      {.target = Target::sm90a(),
                       .pass_config = LinearAttentionMbarrierPassConfig()})
                  .ok());
}

// PassConfig::consumer_gemm_turns (src/passes/lower/gemm_turns.cc): the
// first warpgroup's arrive, the first turn before the loop; in the loop the
// Q K^T passes the turn on and P V takes it; after the loop the last pass.
// Nothing without the switch.
TEST(FlashAttention, ConsumerWarpgroupsTakeGemmTurns) {
  const PassConfig turns{.consumer_gemm_turns = true};
  for (int threads : {256, 384}) {
    FlashAttentionConfig c{.B = 1,
                           .S = 333,
                           .H = 2,
                           .D = 64,
                           .causal = true,
                           .block_m = threads / 2,
                           .block_n = 128,
                           .threads = threads};
    absl::StatusOr<Program> p = FlashAttentionProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    const std::string groups = std::to_string(threads / 128);
    EXPECT_EQ(CountMatches(*p, "tl::named_barrier_arrive(2, 256)", turns), 1);
    EXPECT_EQ(CountMatches(*p, "tl::named_barrier_sync(((tx / 128) + 2), 256)",
                           turns),
              2);
    EXPECT_EQ(CountMatches(*p,
                           "tl::named_barrier_arrive(((((tx / 128) + 1) % " +
                               groups + ") + 2), 256)",
                           turns),
              2);
    EXPECT_EQ(CountMatches(*p, "named_barrier_arrive", {}), 0);
    // With the overlap's rotated loop (gemm_turns_rotated.cc): a turn for
    // the first Q K^T, for Q K^T + P V in the loop and for the last P V,
    // whose pass is the last warpgroup's to leave out.
    c.overlap = true;
    c.num_stages = 3;
    p = FlashAttentionProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(CountMatches(*p, "tl::named_barrier_arrive(2, 256)", turns), 1);
    EXPECT_EQ(CountMatches(*p, "tl::named_barrier_sync(((tx / 128) + 2), 256)",
                           turns),
              3);
    EXPECT_EQ(CountMatches(*p,
                           "tl::named_barrier_arrive(((((tx / 128) + 1) % " +
                               groups + ") + 2), 256)",
                           turns),
              3);
    EXPECT_EQ(
        CountMatches(
            *p, "if (((tx / 128) < " + std::to_string(threads / 128 - 1) + "))",
            turns),
        1);
    EXPECT_EQ(CountMatches(*p, "named_barrier_arrive", {}), 0);
  }
}

}  // namespace
}  // namespace tessel::samples
