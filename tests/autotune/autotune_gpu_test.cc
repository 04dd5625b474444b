// tessel::autotune on a GPU: the sample GEMM at 512^3 over four tiles, one
// of which cannot compile. The invalid one is skipped, the winner matches
// the float64 reference, the JSON file is written, and a second tune loads
// it without compiling anything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "jit/counters.h"
#include "jit/device_buffer.h"
#include "jit/kernel_cache.h"
#include "nlohmann/json.hpp"
#include "samples/gemm_tune.h"
#include "src/runtime/program_cache.h"
#include "tessel/testing.h"
#include "tests/autotune/gemm_cases.h"
#include "tests/autotune/temp_dir.h"

namespace tessel::autotuner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Runs `kernel` on fresh inputs and compares C with the float64 reference.
void ExpectMatchesReference(const CompiledKernel& kernel,
                            const samples::GemmConfig& config) {
  absl::StatusOr<samples::Workload> w = samples::GemmWorkload(config, 7);
  ASSERT_TRUE(w.ok()) << w.status();
  HostTensor& a = w->tensors.at("A");
  HostTensor& b = w->tensors.at("B");
  HostTensor& c = w->tensors.at("C");
  auto a_dev = jit::DeviceBuffer::Allocate(a.num_bytes());
  auto b_dev = jit::DeviceBuffer::Allocate(b.num_bytes());
  auto c_dev = jit::DeviceBuffer::Allocate(c.num_bytes());
  ASSERT_TRUE(a_dev.ok() && b_dev.ok() && c_dev.ok());
  ASSERT_TRUE(a_dev->CopyFromHost(a.data(), a.num_bytes()).ok());
  ASSERT_TRUE(b_dev->CopyFromHost(b.data(), b.num_bytes()).ok());
  ASSERT_TRUE(c_dev->Fill(0xFF).ok());
  absl::Status launched = kernel.launch(
      {TensorView::Contiguous(a_dev->ptr(), a.dtype(), a.shape()),
       TensorView::Contiguous(b_dev->ptr(), b.dtype(), b.shape()),
       TensorView::Contiguous(c_dev->ptr(), c.dtype(), c.shape())});
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  ASSERT_TRUE(c_dev->CopyToHost(c.data(), c.num_bytes()).ok());
  const double tol = samples::GemmTolerance(config.out_dtype);
  tessel::testing::ExpectAllClose(
      c, samples::ReferenceGemm(a, b, config.layout), tol, tol);
}

TEST(AutotuneGpu, TunesTheSampleGemm) {
  TESSEL_SKIP_WITHOUT_GPU();
  autotuner::testing::TempDir tmp;
  const samples::GemmConfig gemm = autotuner::testing::Gemm512();
  TuneOptions options;
  options.store_dir = tmp.path() + "/autotune";
  std::ostringstream progress;
  options.progress = &progress;

  absl::StatusOr<TuneResult> first =
      samples::TuneGemm(gemm, autotuner::testing::Gemm512Space(), options);
  std::cout << progress.str();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->from_store);
  ASSERT_EQ(first->candidates.size(), 4u);
  EXPECT_EQ(first->timed, 3);
  EXPECT_EQ(first->failed, 1);
  const TuneCandidate& invalid =
      first->candidates[autotuner::testing::kInvalidCandidate];
  EXPECT_EQ(invalid.outcome, TuneOutcome::kCompileFailed) << invalid.status;
  EXPECT_THAT(progress.str(), HasSubstr("[4/4] block_m=256"));
  EXPECT_THAT(progress.str(), HasSubstr("compile failed"));
  for (const TuneCandidate& c : first->candidates) {
    if (c.outcome == TuneOutcome::kTimed) {
      EXPECT_GT(c.ms, 0);
    }
  }
  EXPECT_GT(first->best_ms, 0);
  EXPECT_NE(first->best.Int("block_m", 0), 256);

  // The winner, run again on other inputs, matches the float64 reference.
  ASSERT_TRUE(first->kernel.valid());
  ExpectMatchesReference(first->kernel, gemm);

  // The JSON file.
  ASSERT_FALSE(first->store_path.empty());
  ASSERT_TRUE(fs::exists(first->store_path));
  EXPECT_EQ(fs::path(first->store_path).parent_path(),
            fs::path(options.store_dir));
  std::ifstream in(first->store_path);
  nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json["kernel"], "gemm_NN");
  EXPECT_EQ(json["key"], first->key);
  EXPECT_EQ(json["best_ms"], first->best_ms);
  EXPECT_THAT(json["device"].get<std::string>(), HasSubstr("NVIDIA"));
  EXPECT_EQ(
      json["candidates"][autotuner::testing::kInvalidCandidate]["outcome"],
      "compile failed");

  // A second tune: the stored winner, no NVRTC compile, nothing evaluated.
  // With a disk cache, forget the in-memory cubins (and compile()'s program
  // memo) so the winner really comes from disk, as in a fresh process.
  const bool disk = jit::KernelCache::Default().disk().enabled();
  if (disk) {
    jit::KernelCache::Default().ClearMemory();
    runtime::ProgramCache::Global().Clear();
  }
  const jit::JitCounters before = jit::GetJitCounters();
  int evaluated = 0;
  options.on_candidate = [&](const TuneCandidate&) { ++evaluated; };
  absl::StatusOr<TuneResult> second =
      samples::TuneGemm(gemm, autotuner::testing::Gemm512Space(), options);
  ASSERT_TRUE(second.ok()) << second.status();
  const jit::JitCounters after = jit::GetJitCounters();
  EXPECT_TRUE(second->from_store);
  EXPECT_TRUE(second->best == first->best);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(second->candidates.empty());
  EXPECT_EQ(after.nvrtc_compiles, before.nvrtc_compiles);
  EXPECT_EQ(after.misses, before.misses);
  if (disk) {
    EXPECT_EQ(after.disk_hits, before.disk_hits + 1);
  }
  ExpectMatchesReference(second->kernel, gemm);
}

TEST(AutotuneGpu, TunesTheScheduleAxes) {
  TESSEL_SKIP_WITHOUT_GPU();
  // One tile, its schedules free: persistent alone, in cluster pairs (4 x 4
  // tiles: pairs along M), one block per tile. Every one must pass the
  // float64 check the tuner runs before timing.
  const samples::GemmConfig gemm = autotuner::testing::Gemm512();
  const TuneSpace space = samples::GemmTuneSpace(gemm, Target::detect(),
                                                 {{"block_m", 128},
                                                  {"block_n", 128},
                                                  {"block_k", 64},
                                                  {"num_stages", 3},
                                                  {"threads", 256},
                                                  {"pingpong", 0}});
  absl::StatusOr<std::vector<TuneConfig>> configs = space.Enumerate();
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), Target::detect().sm() >= 90 ? 3u : 1u);
  std::ostringstream progress;
  absl::StatusOr<TuneResult> r =
      samples::TuneGemm(gemm, space, {.persist = false, .progress = &progress});
  std::cout << progress.str();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timed, static_cast<int>(configs->size()));
  EXPECT_EQ(r->failed, 0);
  ExpectMatchesReference(r->kernel, gemm);
}

TEST(AutotuneGpu, NoCheckStillLaunchesAndTimes) {
  TESSEL_SKIP_WITHOUT_GPU();
  // Without a check the candidate must at least launch; the args' shapes
  // are checked by launch(), so a wrong-shaped C fails every candidate.
  autotuner::testing::TempDir tmp;
  const samples::GemmConfig gemm = autotuner::testing::Gemm512();
  auto a = jit::DeviceBuffer::Allocate(512 * 512 * 2);
  auto b = jit::DeviceBuffer::Allocate(512 * 512 * 2);
  auto c = jit::DeviceBuffer::Allocate(512 * 512 * 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(a->Fill(0).ok() && b->Fill(0).ok());
  TuneRequest request;
  request.kernel = "gemm_NN_nocheck";
  request.space = TuneSpace::List({{{"block_m", 64}}, {{"block_m", 128}}});
  request.factory = [gemm](const TuneConfig& t) -> absl::StatusOr<Program> {
    samples::GemmConfig g = gemm;
    g.tile.block_m = static_cast<int>(t.Int("block_m", 128));
    g.tile.block_n = 128;
    g.tile.threads = 128;
    return samples::GemmProgram(g);
  };
  request.args = {TensorView::Contiguous(a->ptr(), f16, {512, 512}),
                  TensorView::Contiguous(b->ptr(), f16, {512, 512}),
                  TensorView::Contiguous(c->ptr(), f16, {512, 512})};
  absl::StatusOr<TuneResult> r =
      autotune(request, {.persist = false, .progress = &std::cout});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timed, 2);

  request.args[2].shape = {512, 256};
  r = autotune(request, {.persist = false, .progress = &std::cout});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("check failed"));
}

}  // namespace
}  // namespace tessel::autotuner
