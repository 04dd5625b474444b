// The search loop against a fake evaluator: the pick, failures at each step,
// threads, order and the budget.
#include "src/autotune/search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "tests/autotune/fake_evaluator.h"

namespace tessel::autotuner {
namespace {

using testing::FakeClock;
using testing::FakeEvaluator;
using ::testing::HasSubstr;

std::vector<TuneConfig> Configs(int n) {
  std::vector<TuneConfig> configs;
  for (int i = 0; i < n; ++i) configs.push_back({{"i", i}});
  return configs;
}

int I(const TuneConfig& c) { return static_cast<int>(c.Int("i", -1)); }

TEST(Search, PicksTheFastest) {
  FakeEvaluator eval;
  eval.ms_of = [](const TuneConfig& c) { return std::abs(I(c) - 5) + 0.5; };
  SearchResult r = RunSearch(Configs(9), eval, {.threads = 3});
  EXPECT_EQ(r.best, 5);
  EXPECT_EQ(r.timed, 9);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.skipped, 0);
  ASSERT_EQ(r.candidates.size(), 9u);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(r.candidates[i].index, i);
    EXPECT_EQ(r.candidates[i].total, 9);
    EXPECT_EQ(I(r.candidates[i].config), i);
    EXPECT_EQ(r.candidates[i].outcome, TuneOutcome::kTimed);
    EXPECT_DOUBLE_EQ(r.candidates[i].ms, std::abs(i - 5) + 0.5);
  }
  EXPECT_EQ(eval.builds, 9);
  EXPECT_EQ(eval.compiles, 9);
  EXPECT_EQ(eval.checks, 9);
  EXPECT_EQ(eval.times, 9);
}

TEST(Search, TiesGoToTheEarlierConfig) {
  FakeEvaluator eval;
  eval.ms_of = [](const TuneConfig& c) { return I(c) == 0 ? 2.0 : 1.0; };
  SearchResult r = RunSearch(Configs(4), eval, {.threads = 4});
  EXPECT_EQ(r.best, 1);
}

TEST(Search, FailuresAreReportedAndSkipped) {
  FakeEvaluator eval;
  // The fastest configs all fail, each at another step.
  eval.ms_of = [](const TuneConfig& c) { return 10.0 - I(c); };
  eval.build_error = [](const TuneConfig& c) {
    return I(c) == 9 ? absl::InvalidArgumentError("bad tile")
                     : absl::OkStatus();
  };
  eval.compile_error = [](const TuneConfig& c) {
    return I(c) == 8 ? absl::ResourceExhaustedError("needs 300 KB shared")
                     : absl::OkStatus();
  };
  eval.check_error = [](const TuneConfig& c) {
    return I(c) == 7 ? absl::InternalError("C differs") : absl::OkStatus();
  };
  eval.time_error = [](const TuneConfig& c) {
    return I(c) == 6 ? absl::InternalError("launch failed") : absl::OkStatus();
  };
  std::vector<std::string> lines;
  SearchResult r =
      RunSearch(Configs(10), eval,
                {.threads = 2, .on_candidate = [&](const TuneCandidate& c) {
                   lines.push_back(c.ToString());
                 }});
  EXPECT_EQ(r.best, 5);
  EXPECT_EQ(r.timed, 6);
  EXPECT_EQ(r.failed, 4);
  EXPECT_EQ(r.candidates[9].outcome, TuneOutcome::kBuildFailed);
  EXPECT_EQ(r.candidates[8].outcome, TuneOutcome::kCompileFailed);
  EXPECT_EQ(r.candidates[8].status.code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.candidates[7].outcome, TuneOutcome::kCheckFailed);
  EXPECT_EQ(r.candidates[6].outcome, TuneOutcome::kTimingFailed);
  // A failed candidate goes no further.
  EXPECT_EQ(eval.compiles, 9);
  EXPECT_EQ(eval.checks, 8);
  EXPECT_EQ(eval.times, 7);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0], "[1/10] i=0: 10 ms");
  EXPECT_EQ(lines[8], "[9/10] i=8: compile failed: needs 300 KB shared");
  EXPECT_EQ(lines[9], "[10/10] i=9: build failed: bad tile");
  EXPECT_EQ(lines[7], "[8/10] i=7: check failed: C differs");
}

TEST(Search, NonsenseTimingsAreFailures) {
  FakeEvaluator eval;
  eval.ms_of = [](const TuneConfig& c) {
    return I(c) == 0 ? std::nan("") : I(c) == 1 ? -1.0 : 3.0;
  };
  SearchResult r = RunSearch(Configs(3), eval, {});
  EXPECT_EQ(r.best, 2);
  EXPECT_EQ(r.candidates[0].outcome, TuneOutcome::kTimingFailed);
  EXPECT_EQ(r.candidates[1].outcome, TuneOutcome::kTimingFailed);
}

TEST(Search, NothingPassesMeansNoBest) {
  FakeEvaluator eval;
  eval.compile_error = [](const TuneConfig&) {
    return absl::InternalError("no");
  };
  SearchResult r = RunSearch(Configs(3), eval, {.threads = 2});
  EXPECT_EQ(r.best, -1);
  EXPECT_EQ(r.failed, 3);
  EXPECT_FALSE(r.best_kernel.valid());
}

TEST(Search, CompilesOverlapWhileChecksAndTimingsStayOnTheCallingThread) {
  FakeEvaluator eval;
  eval.compile_sleep = absl::Milliseconds(30);
  SearchResult r = RunSearch(Configs(8), eval, {.threads = 4});
  EXPECT_EQ(r.timed, 8);
  EXPECT_GT(eval.max_compiling.load(), 1);
  EXPECT_LE(eval.max_compiling.load(), 4);
  ASSERT_EQ(eval.gpu_threads.size(), 16u);
  for (size_t i = 0; i < eval.gpu_threads.size(); ++i) {
    EXPECT_EQ(eval.gpu_threads[i], std::this_thread::get_id());
    // Check then Time of config 0, of config 1, ...
    EXPECT_EQ(I(eval.gpu_order[i]), static_cast<int>(i / 2));
  }
}

TEST(Search, OneThreadCompilesSerially) {
  FakeEvaluator eval;
  eval.compile_sleep = absl::Milliseconds(5);
  SearchResult r = RunSearch(Configs(4), eval, {.threads = 1});
  EXPECT_EQ(r.timed, 4);
  EXPECT_EQ(eval.max_compiling.load(), 1);
}

TEST(Search, BudgetStopsNewCandidates) {
  FakeClock clock;
  FakeEvaluator eval;
  eval.clock = &clock;  // each timing takes its ms in (fake) seconds
  eval.ms_of = [](const TuneConfig& c) { return 10.0 + I(c); };
  SearchResult r =
      RunSearch(Configs(10), eval,
                {.threads = 2, .budget = absl::Seconds(35), .now = clock.Fn()});
  // Timings start at t = 0, 10, 21, 33; the fifth would start at 46 > 35.
  EXPECT_EQ(r.timed, 4);
  EXPECT_EQ(r.skipped, 6);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.best, 0);
  EXPECT_EQ(eval.times, 4);
  for (int i = 4; i < 10; ++i) {
    EXPECT_EQ(r.candidates[i].outcome, TuneOutcome::kSkippedBudget) << i;
  }
}

TEST(Search, SpentBudgetStartsNothing) {
  FakeClock clock;
  FakeEvaluator eval;
  SearchResult r = RunSearch(
      Configs(5), eval,
      {.threads = 3, .budget = absl::ZeroDuration(), .now = clock.Fn()});
  EXPECT_EQ(r.skipped, 5);
  EXPECT_EQ(r.best, -1);
  EXPECT_EQ(eval.builds, 0);
  EXPECT_EQ(eval.times, 0);
}

}  // namespace
}  // namespace tessel::autotuner
