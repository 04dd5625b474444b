// AutotuneWith end to end on a fake evaluator: progress, the store, the
// second tune that evaluates nothing, retuning, and the error cases.
#include "src/autotune/tuner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/autotune/tune_store.h"
#include "tessel/testing.h"
#include "tests/autotune/fake_evaluator.h"
#include "tests/autotune/temp_dir.h"

namespace tessel::autotuner {
namespace {

namespace fs = std::filesystem;
using testing::FakeClock;
using testing::FakeEvaluator;
using ::testing::HasSubstr;
using testing::TempDir;

const DeviceIdentity kDevice{.name = "Fake GPU", .arch = "sm_90a"};

TuneRequest Request() {
  TuneRequest r;
  r.kernel = "gemm_NN";
  r.space = TuneSpace::Product(
      {{"block_m", {64, 128, 256}}, {"block_n", {64, 128}}},
      [](const TuneConfig& c) {
        return c.Int("block_m", 0) != 64 || c.Int("block_n", 0) != 64;
      });
  r.args = {TensorView::Contiguous(uint64_t{1}, f16, {512, 512})};
  return r;
}

// 128x128 is fastest; 256x128 does not compile.
void ShapeTimings(FakeEvaluator& eval) {
  eval.ms_of = [](const TuneConfig& c) {
    return (c.Int("block_m", 0) == 128 && c.Int("block_n", 0) == 128) ? 0.25
                                                                      : 0.5;
  };
  eval.compile_error = [](const TuneConfig& c) {
    return c.Int("block_m", 0) == 256 && c.Int("block_n", 0) == 128
               ? absl::ResourceExhaustedError("needs 300 KB of shared memory")
               : absl::OkStatus();
  };
}

TuneOptions Options(const std::string& dir, std::ostream* progress = nullptr) {
  TuneOptions o;
  o.compile = {.target = Target::sm90a()};
  o.compile_threads = 2;
  o.store_dir = dir;
  o.progress = progress;
  return o;
}

TEST(Autotune, TunesStoresAndPrintsProgress) {
  TempDir tmp;
  FakeEvaluator eval;
  ShapeTimings(eval);
  std::ostringstream progress;
  std::vector<int> seen;
  TuneOptions options = Options(tmp.path(), &progress);
  options.on_candidate = [&](const TuneCandidate& c) {
    seen.push_back(c.index);
  };
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), options, kDevice, eval);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->from_store);
  EXPECT_EQ(r->best.ToString(), "block_m=128 block_n=128");
  EXPECT_DOUBLE_EQ(r->best_ms, 0.25);
  EXPECT_EQ(r->candidates.size(), 5u);
  EXPECT_EQ(r->timed, 4);
  EXPECT_EQ(r->failed, 1);
  EXPECT_EQ(r->skipped, 0);
  EXPECT_THAT(seen, ::testing::ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(r->key.size(), 32u);
  EXPECT_TRUE(fs::exists(r->store_path)) << r->store_path;
  EXPECT_EQ(fs::path(r->store_path).parent_path(), fs::path(tmp.path()));
  EXPECT_TRUE(r->warnings.empty());
  const std::string text = progress.str();
  EXPECT_THAT(text, HasSubstr("autotune gemm_NN: 5 configs on Fake GPU"));
  EXPECT_THAT(text, HasSubstr("[1/5] block_m=64 block_n=128: 0.5 ms\n"));
  EXPECT_THAT(text, HasSubstr("[5/5] block_m=256 block_n=128: compile failed: "
                              "needs 300 KB of shared memory\n"));
  EXPECT_THAT(text, HasSubstr("best block_m=128 block_n=128, 0.25 ms (4 "
                              "timed, 1 failed, 0 skipped"));
}

TEST(Autotune, SecondTuneLoadsTheWinnerAndEvaluatesNothing) {
  TempDir tmp;
  {
    FakeEvaluator first;
    ShapeTimings(first);
    ASSERT_TRUE(
        AutotuneWith(Request(), Options(tmp.path()), kDevice, first).ok());
  }
  FakeEvaluator second;
  // Were it to tune again, another config would win.
  second.ms_of = [](const TuneConfig& c) {
    return c.Int("block_m", 0) == 64 ? 0.01 : 1.0;
  };
  std::ostringstream progress;
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), Options(tmp.path(), &progress), kDevice, second);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->from_store);
  EXPECT_EQ(r->best.ToString(), "block_m=128 block_n=128");
  EXPECT_DOUBLE_EQ(r->best_ms, 0.25);
  EXPECT_TRUE(r->candidates.empty());
  // Only the winner is built and compiled (a kernel cache hit in real use).
  EXPECT_EQ(second.builds, 1);
  EXPECT_EQ(second.compiles, 1);
  EXPECT_EQ(second.checks, 0);
  EXPECT_EQ(second.times, 0);
  EXPECT_THAT(progress.str(), HasSubstr("stored winner block_m=128 "
                                        "block_n=128 (0.25 ms when tuned)"));

  // retune searches again, and replaces the stored winner.
  TuneOptions retune = Options(tmp.path());
  retune.retune = true;
  FakeEvaluator third;
  third.ms_of = second.ms_of;
  r = AutotuneWith(Request(), retune, kDevice, third);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->from_store);
  EXPECT_EQ(third.times, 5);
  EXPECT_EQ(r->best.ToString(), "block_m=64 block_n=128");
  FakeEvaluator fourth;
  r = AutotuneWith(Request(), Options(tmp.path()), kDevice, fourth);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->from_store);
  EXPECT_EQ(r->best.ToString(), "block_m=64 block_n=128");
}

TEST(Autotune, AnotherKeyTunesAgain) {
  TempDir tmp;
  FakeEvaluator first;
  ASSERT_TRUE(
      AutotuneWith(Request(), Options(tmp.path()), kDevice, first).ok());
  // Another space (no filter), another shape, another device: each tunes.
  TuneRequest wider = Request();
  wider.space =
      TuneSpace::Product({{"block_m", {64, 128, 256}}, {"block_n", {64, 128}}});
  TuneRequest bigger = Request();
  bigger.args[0].shape = {1024, 512};
  for (auto [request, device] :
       {std::pair{wider, kDevice}, std::pair{bigger, kDevice},
        std::pair{Request(), DeviceIdentity{"Other GPU", "sm_90a"}}}) {
    FakeEvaluator eval;
    absl::StatusOr<TuneResult> r =
        AutotuneWith(request, Options(tmp.path()), device, eval);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->from_store);
    EXPECT_GT(eval.times, 0);
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()),
                          fs::directory_iterator()),
            4);
}

TEST(Autotune, PersistOffStoresNothing) {
  TempDir tmp;
  TuneOptions options = Options(tmp.path());
  options.persist = false;
  for (int i = 0; i < 2; ++i) {
    FakeEvaluator eval;
    absl::StatusOr<TuneResult> r =
        AutotuneWith(Request(), options, kDevice, eval);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->from_store);
    EXPECT_EQ(r->store_path, "");
    EXPECT_EQ(eval.times, 5);
  }
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(Autotune, CorruptStoredFileIsIgnoredAndReplaced) {
  TempDir tmp;
  FakeEvaluator first;
  ShapeTimings(first);
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), Options(tmp.path()), kDevice, first);
  ASSERT_TRUE(r.ok());
  const std::string path = r->store_path;
  std::ofstream(path) << "{\"schema\": 1, \"best\": {\"block";  // torn

  FakeEvaluator second;
  ShapeTimings(second);
  r = AutotuneWith(Request(), Options(tmp.path()), kDevice, second);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->from_store);
  EXPECT_EQ(second.times, 4);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_THAT(r->warnings[0], HasSubstr("not valid JSON"));
  // Replaced by a good file: the third tune loads it.
  FakeEvaluator third;
  r = AutotuneWith(Request(), Options(tmp.path()), kDevice, third);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->from_store);
  EXPECT_EQ(third.times, 0);
}

TEST(Autotune, StoredWinnerThatNoLongerBuildsTunesAgain) {
  TempDir tmp;
  FakeEvaluator first;
  ShapeTimings(first);
  ASSERT_TRUE(
      AutotuneWith(Request(), Options(tmp.path()), kDevice, first).ok());
  FakeEvaluator second;
  second.build_error = [](const TuneConfig& c) {
    return c.Int("block_m", 0) == 128 && c.Int("block_n", 0) == 128
               ? absl::InvalidArgumentError("tile no longer supported")
               : absl::OkStatus();
  };
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), Options(tmp.path()), kDevice, second);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->from_store);
  EXPECT_NE(r->best.ToString(), "block_m=128 block_n=128");
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_THAT(r->warnings[0], HasSubstr("no longer builds"));
}

TEST(Autotune, NoPassingCandidateIsNotFoundWithEveryReason) {
  TempDir tmp;
  FakeEvaluator eval;
  eval.check_error = [](const TuneConfig&) {
    return absl::InternalError("C differs from the reference");
  };
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), Options(tmp.path()), kDevice, eval);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(),
              HasSubstr("[5/5] block_m=256 block_n=128: check failed: C "
                        "differs from the reference"));
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(Autotune, BudgetCutsTheSearchAndTheBestSoFarIsStored) {
  TempDir tmp;
  FakeClock clock;
  FakeEvaluator eval;
  eval.clock = &clock;
  eval.ms_of = [](const TuneConfig& c) {
    return c.Int("block_m", 0) == 128 ? 1.0 : 10.0;
  };
  TuneOptions options = Options(tmp.path());
  options.budget = absl::Seconds(15);
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), options, kDevice, eval, clock.Fn());
  ASSERT_TRUE(r.ok()) << r.status();
  // Timings at t = 0 (10 s), 10 (1 s), 11 (1 s); then 12 (10 s) ends at 22.
  EXPECT_EQ(r->timed, 4);
  EXPECT_EQ(r->skipped, 1);
  EXPECT_EQ(r->best.Int("block_m", 0), 128);
  std::ifstream in(r->store_path);
  nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json["skipped_for_budget"], 1);

  FakeClock late;
  late.Advance(absl::Hours(1));
  FakeEvaluator none;
  options.budget = absl::ZeroDuration();
  options.retune = true;
  r = AutotuneWith(Request(), options, kDevice, none, late.Fn());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(none.builds, 0);
}

TEST(Autotune, BadRequestsAreInvalidArgument) {
  TempDir tmp;
  FakeEvaluator eval;
  TuneRequest unnamed = Request();
  unnamed.kernel = "";
  EXPECT_EQ(
      AutotuneWith(unnamed, Options(tmp.path()), kDevice, eval).status().code(),
      absl::StatusCode::kInvalidArgument);
  TuneRequest empty = Request();
  empty.space = TuneSpace::List({});
  absl::StatusOr<TuneResult> r =
      AutotuneWith(empty, Options(tmp.path()), kDevice, eval);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("autotune gemm_NN: tune space"));
  EXPECT_EQ(eval.builds, 0);
}

TEST(Autotune, UnusableStoreFolderWarnsAndTunes) {
  TempDir tmp;
  const std::string file = tmp.path() + "/not_a_folder";
  std::ofstream(file) << "x";
  FakeEvaluator eval;
  absl::StatusOr<TuneResult> r =
      AutotuneWith(Request(), Options(file), kDevice, eval);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->store_path, "");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_THAT(r->warnings[0], HasSubstr("not storing the result"));
}

TEST(Autotune, CacheSwitchedOffStoresNothingQuietly) {
  TempDir tmp;
  ::setenv("TESSEL_CACHE_DIR", tmp.path().c_str(), 1);
  ::setenv("TESSEL_CACHE", "off", 1);
  TuneOptions options = Options("");
  for (int i = 0; i < 2; ++i) {
    FakeEvaluator eval;
    absl::StatusOr<TuneResult> r =
        AutotuneWith(Request(), options, kDevice, eval);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->from_store);
    EXPECT_TRUE(r->warnings.empty());
    EXPECT_EQ(r->store_path, "");
  }
  ::unsetenv("TESSEL_CACHE");
  ::unsetenv("TESSEL_CACHE_DIR");
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(Autotune, WithoutAGpuIsUnavailable) {
  if (tessel::testing::GpuUnavailableReason().empty()) {
    GTEST_SKIP() << "a GPU is here; tessel_autotune_gpu_test covers it";
  }
  TuneRequest request = Request();
  request.factory = [](const TuneConfig&) -> absl::StatusOr<Program> {
    return Program();
  };
  absl::StatusOr<TuneResult> r =
      autotune(request, {.compile = {.target = Target::sm90a()}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("needs a GPU"));
  TuneRequest no_factory = Request();
  EXPECT_EQ(autotune(no_factory).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessel::autotuner
