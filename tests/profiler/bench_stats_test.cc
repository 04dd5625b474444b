// do_bench's host-side arithmetic (no GPU): repetition counts, quantiles,
// summaries, option checks; and Unavailable without a driver.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "jit/driver_api.h"
#include "src/profiler/bench_stats.h"
#include "tessel/profiler.h"

namespace tessel::profiler {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RepetitionsFor, FillsTheBudget) {
  EXPECT_EQ(RepetitionsFor(100, 1, 5, 10000), 100);
  EXPECT_EQ(RepetitionsFor(100, 0.3, 5, 10000), 334);  // rounds up
  EXPECT_EQ(RepetitionsFor(25, 2.5, 1, 10000), 10);
}

TEST(RepetitionsFor, StaysWithinBounds) {
  EXPECT_EQ(RepetitionsFor(100, 50, 5, 10000), 5);      // slow kernel: min
  EXPECT_EQ(RepetitionsFor(100, 1e-3, 5, 1000), 1000);  // fast kernel: max
  EXPECT_EQ(RepetitionsFor(100, 1e6, 1, 10), 1);
}

TEST(RepetitionsFor, BelowTimerResolutionAsksForTheMost) {
  EXPECT_EQ(RepetitionsFor(100, 0, 5, 777), 777);
  EXPECT_EQ(RepetitionsFor(100, 1e-5, 5, 777), 777);
  EXPECT_EQ(RepetitionsFor(100, -1, 5, 777), 777);
}

TEST(Quantile, InterpolatesLinearlyLikeNumpy) {
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1), 4);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 2.5);
  // numpy.quantile([1, 2, 3, 4], 0.2) == 1.6
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.2), 1.6);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.8), 3.4);
  const std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ(Quantile(one, 0.3), 7);
}

TEST(Summarize, ComputesEveryStatistic) {
  BenchOptions options;
  options.quantiles = {0.2, 0.5, 0.8};
  absl::StatusOr<BenchResult> r = Summarize({4, 1, 3, 2, 10}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->ms, 3);  // the median by default
  EXPECT_DOUBLE_EQ(r->median_ms, 3);
  EXPECT_DOUBLE_EQ(r->mean_ms, 4);
  EXPECT_DOUBLE_EQ(r->min_ms, 1);
  EXPECT_DOUBLE_EQ(r->max_ms, 10);
  EXPECT_THAT(r->quantiles_ms,
              ElementsAre(DoubleEq(1.8), DoubleEq(3), DoubleEq(5.2)));
  EXPECT_EQ(r->reps, 5);
  EXPECT_TRUE(r->times_ms.empty());
}

TEST(Summarize, ReturnModesPickTheStatistic) {
  const std::vector<double> samples = {4, 1, 3, 2, 10};
  BenchOptions options;
  options.return_mode = ReturnMode::kMean;
  EXPECT_DOUBLE_EQ(Summarize(samples, options)->ms, 4);
  options.return_mode = ReturnMode::kMin;
  EXPECT_DOUBLE_EQ(Summarize(samples, options)->ms, 1);
  options.return_mode = ReturnMode::kMax;
  EXPECT_DOUBLE_EQ(Summarize(samples, options)->ms, 10);
  options.return_mode = ReturnMode::kAll;
  absl::StatusOr<BenchResult> all = Summarize(samples, options);
  ASSERT_TRUE(all.ok());
  EXPECT_DOUBLE_EQ(all->ms, 3);
  EXPECT_THAT(all->times_ms, ElementsAre(4, 1, 3, 2, 10));  // run order
}

TEST(Summarize, NoSamplesIsAnError) {
  EXPECT_EQ(Summarize({}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateBenchOptions, RejectsWhatCannotRun) {
  EXPECT_TRUE(ValidateBenchOptions({}).ok());
  auto code = [](BenchOptions o) { return ValidateBenchOptions(o).code(); };
  constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code({.warmup_ms = -1}), kInvalid);
  EXPECT_EQ(code({.rep_ms = 0}), kInvalid);
  EXPECT_EQ(code({.rep_ms = std::numeric_limits<double>::infinity()}),
            kInvalid);
  EXPECT_EQ(code({.quantiles = {0.5, 1.5}}), kInvalid);
  EXPECT_EQ(code({.quantiles = {-0.1}}), kInvalid);
  EXPECT_EQ(code({.min_reps = 0}), kInvalid);
  EXPECT_EQ(code({.min_reps = 10, .max_reps = 5}), kInvalid);
  EXPECT_EQ(code({.l2_flush_bytes = -1}), kInvalid);
  EXPECT_THAT(ValidateBenchOptions({.quantiles = {2}}).message(),
              HasSubstr("quantile 2 is outside [0, 1]"));
}

class DoBenchWithoutDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    jit::internal::ResetDriverForTesting("libtessel-no-such-driver.so.1");
  }
  void TearDown() override { jit::internal::ResetDriverForTesting(""); }
};

TEST_F(DoBenchWithoutDriver, IsUnavailableAndNeverCallsFn) {
  int calls = 0;
  absl::StatusOr<BenchResult> r = do_bench([&](CUstream_st*) {
    ++calls;
    return absl::OkStatus();
  });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("no CUDA driver"));
  EXPECT_EQ(calls, 0);
}

TEST_F(DoBenchWithoutDriver, BadOptionsAreReportedFirst) {
  absl::StatusOr<BenchResult> r =
      do_bench([](CUstream_st*) { return absl::OkStatus(); }, {.rep_ms = -1});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessel::profiler
