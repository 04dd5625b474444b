// The sample GEMM's tuning pieces without a GPU: tile <-> config, the
// --tune space, and the GPU test's candidates compiled for sm_90a on the
// autotuner's compile threads (real NVRTC, fake check and timing).
#include "samples/gemm_tune.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/autotune/tuner.h"
#include "tests/autotune/gemm_cases.h"
#include "tests/autotune/temp_dir.h"

namespace tessel::autotuner {
namespace {

using samples::GemmConfig;
using samples::GemmTile;
using ::testing::HasSubstr;

TEST(GemmTune, TileConfigRoundTrip) {
  GemmTile tile{.block_m = 128,
                .block_n = 64,
                .block_k = 32,
                .num_stages = 2,
                .threads = 128,
                .panel = 4};
  TuneConfig c = samples::GemmTileConfig(tile);
  EXPECT_EQ(c.ToString(),
            "block_m=128 block_n=64 block_k=32 num_stages=2 threads=128 "
            "panel=4 cluster=1 pingpong=0 persistent=1");
  absl::StatusOr<GemmTile> back = samples::GemmTileFromConfig(c);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->block_n, 64);
  EXPECT_EQ(back->panel, 4);
  // Missing parameters keep the base's.
  back = samples::GemmTileFromConfig({{"block_k", 16}}, tile);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->block_k, 16);
  EXPECT_EQ(back->block_m, 128);
  // The ping-pong schedule is a 0 / 1 parameter of the tile.
  back = samples::GemmTileFromConfig({{"pingpong", 1}}, tile);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->pingpong);
  EXPECT_EQ(samples::GemmTileConfig(*back).Int("pingpong", 0), 1);
  EXPECT_EQ(samples::GemmTileFromConfig({{"pingpong", 2}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // So are the persistent grid and the cluster size.
  back = samples::GemmTileFromConfig({{"persistent", 0}, {"cluster", 2}}, tile);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->persistent);
  EXPECT_EQ(back->cluster, 2);
  EXPECT_THAT(
      samples::GemmTileFromConfig({{"persistent", 3}}).status().message(),
      HasSubstr("persistent=3 is not 0 or 1"));
}

TEST(GemmTune, TileConfigErrors) {
  EXPECT_THAT(samples::GemmTileFromConfig({{"block_q", 1}}).status().message(),
              HasSubstr("unknown parameter \"block_q\""));
  EXPECT_EQ(samples::GemmTileFromConfig({{"block_m", "big"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(samples::GemmTileFromConfig({{"block_m", int64_t{1} << 40}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GemmTune, SpaceIsSmallSaneAndBuilds) {
  GemmConfig gemm{.M = 4096, .N = 4096, .K = 4096};
  absl::StatusOr<std::vector<TuneConfig>> configs =
      samples::GemmTuneSpace(gemm, Target::sm90a()).Enumerate();
  ASSERT_TRUE(configs.ok()) << configs.status();
  // 54 cooperative tiles, each persistent alone or in cluster pairs or not
  // persistent; 16 ping-pong ones (128 threads, 4 or 6 stages, persistent).
  EXPECT_EQ(configs->size(), 54u * 3 + 16);
  // The measured default is a candidate.
  const TuneConfig def = samples::GemmTileConfig(GemmTile{});
  EXPECT_NE(std::find(configs->begin(), configs->end(), def), configs->end());
  for (const TuneConfig& c : *configs) {
    const int64_t per_thread =
        c.Int("block_m", 0) * c.Int("block_n", 0) / c.Int("threads", 1);
    EXPECT_GE(per_thread, 32) << c.ToString();
    EXPECT_LE(per_thread, 128) << c.ToString();
    GemmConfig candidate = gemm;
    candidate.tile = *samples::GemmTileFromConfig(c, gemm.tile);
    EXPECT_TRUE(samples::GemmProgram(candidate).ok()) << c.ToString();
  }
  int pairs = 0, one_per_tile = 0;
  for (const TuneConfig& c : *configs) {
    const bool persistent = c.Int("persistent", 0) == 1;
    if (c.Int("pingpong", 0) == 1) {
      EXPECT_EQ(c.Int("threads", 0), 128) << c.ToString();
      EXPECT_GE(c.Int("num_stages", 0), 4) << c.ToString();
      EXPECT_TRUE(persistent) << c.ToString();
      EXPECT_EQ(c.Int("cluster", 0), 1) << c.ToString();
    } else {
      EXPECT_LE(c.Int("num_stages", 0), 4) << c.ToString();
    }
    if (c.Int("cluster", 0) == 2) {
      EXPECT_TRUE(persistent) << c.ToString();
      ++pairs;
    }
    if (!persistent) ++one_per_tile;
  }
  EXPECT_EQ(pairs, 54);
  EXPECT_EQ(one_per_tile, 54);
  // A smaller shared memory filters the largest tiles out; sm_80 has no
  // ping-pong schedule.
  absl::StatusOr<std::vector<TuneConfig>> sm80 =
      samples::GemmTuneSpace(gemm, Target::sm80()).Enumerate();
  ASSERT_TRUE(sm80.ok());
  EXPECT_LT(sm80->size(), 54u);
  for (const TuneConfig& c : *sm80) {
    EXPECT_EQ(c.Int("pingpong", 1), 0) << c.ToString();
    EXPECT_EQ(c.Int("cluster", 0), 1) << c.ToString();
    EXPECT_EQ(c.Int("persistent", 0), 1) << c.ToString();
  }
}

TEST(GemmTune, PinnedAxesTakeTheirValue) {
  GemmConfig gemm{.M = 1024, .N = 1024, .K = 1024};
  absl::StatusOr<std::vector<TuneConfig>> configs =
      samples::GemmTuneSpace(gemm, Target::sm90a(),
                             {{"block_m", 64}, {"threads", 256}})
          .Enumerate();
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_FALSE(configs->empty());
  for (const TuneConfig& c : *configs) {
    EXPECT_EQ(c.Int("block_m", 0), 64);
    EXPECT_EQ(c.Int("threads", 0), 256);
  }
}

// The schedule axes change the compiled kernel, not the program: each of
// persistent, cluster pairs and one block per tile gives its own source.
TEST(GemmTune, ScheduleAxesReachTheCompiler) {
  GemmConfig gemm{.M = 512, .N = 512, .K = 512};
  gemm.tile = {.block_m = 128,
               .block_n = 128,
               .block_k = 64,
               .num_stages = 3,
               .threads = 256};
  absl::StatusOr<Program> program = samples::GemmProgram(gemm);
  ASSERT_TRUE(program.ok()) << program.status();
  auto source = [&](const TuneConfig& schedule) -> std::string {
    CompileOptions options{.target = Target::sm90a()};
    samples::ApplyGemmSchedule(schedule, options);
    absl::StatusOr<CompiledKernel> k = compile(*program, options);
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? k->source() : "";
  };
  const std::string base = source({{"cluster", 1}, {"persistent", 1}});
  const std::string pair = source({{"cluster", 2}, {"persistent", 1}});
  const std::string blocks = source({{"cluster", 1}, {"persistent", 0}});
  EXPECT_THAT(pair, HasSubstr("tl::cluster_sync();"));
  EXPECT_THAT(base, ::testing::Not(HasSubstr("tl::cluster_sync();")));
  EXPECT_NE(base, blocks);
  EXPECT_NE(pair, blocks);
  // A config without the axes keeps the defaults.
  EXPECT_EQ(source({}), base);
}

// Real builds and compiles (NVRTC for sm_90a, no GPU needed) on the
// autotuner's threads; every candidate "passes" and takes its index in ms.
class CompileOnlyEvaluator : public CandidateEvaluator {
 public:
  explicit CompileOnlyEvaluator(GemmConfig gemm) : gemm_(gemm) {}
  absl::StatusOr<Program> Build(const TuneConfig& config) override {
    GemmConfig c = gemm_;
    absl::StatusOr<GemmTile> tile = samples::GemmTileFromConfig(config);
    if (!tile.ok()) return tile.status();
    c.tile = *tile;
    return samples::GemmProgram(c);
  }
  absl::StatusOr<CompiledKernel> Compile(const TuneConfig&,
                                         const Program& program) override {
    return compile(program, {.target = Target::sm90a()});
  }
  absl::Status Check(const TuneConfig&, const CompiledKernel& k) override {
    return k.valid() && !k.source().empty() ? absl::OkStatus()
                                            : absl::InternalError("no kernel");
  }
  absl::StatusOr<double> Time(const TuneConfig& config,
                              const CompiledKernel&) override {
    return 1.0 + config.Int("block_k", 0);
  }

 private:
  GemmConfig gemm_;
};

TEST(GemmTune, GpuTestCandidatesCompileForSm90aExceptTheInvalidOne) {
  testing::TempDir tmp;
  TuneRequest request;
  request.kernel = "gemm_NN";
  request.space = testing::Gemm512Space();
  CompileOnlyEvaluator eval(testing::Gemm512());
  TuneOptions options;
  options.compile = {.target = Target::sm90a()};
  options.compile_threads = 4;
  options.store_dir = tmp.path();
  absl::StatusOr<TuneResult> r =
      AutotuneWith(request, options, {.name = "none", .arch = "sm_90a"}, eval);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->candidates.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const TuneCandidate& c = r->candidates[i];
    if (i == testing::kInvalidCandidate) {
      EXPECT_EQ(c.outcome, TuneOutcome::kCompileFailed) << c.ToString();
      EXPECT_EQ(c.status.code(), absl::StatusCode::kResourceExhausted)
          << c.status;
    } else {
      EXPECT_EQ(c.outcome, TuneOutcome::kTimed) << c.ToString();
    }
  }
  EXPECT_EQ(r->best.Int("block_k", 0), 32);
  EXPECT_TRUE(r->kernel.valid());
}

}  // namespace
}  // namespace tessel::autotuner
