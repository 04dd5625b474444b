// ExpectAllClose / AllClose: what they accept, and what their report says.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tessel/host_tensor.h"
#include "tessel/testing.h"

namespace tessel::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

HostTensor Make(DataType dtype, std::vector<int64_t> shape,
                std::vector<double> values) {
  absl::StatusOr<HostTensor> t =
      HostTensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// The message of the failure AllClose returns (empty on success).
std::string Report(const HostTensor& a, const HostTensor& r, double rtol,
                   double atol, int worst = kDefaultWorstReported) {
  ::testing::AssertionResult result = AllClose(a, r, rtol, atol, worst);
  return result ? "" : result.message();
}

TEST(AllClose, AcceptsValuesWithinTolerance) {
  HostTensor ref = Make(f64, {2, 2}, {1, -2, 100, 0});
  HostTensor act = Make(f32, {2, 2}, {1.001, -2.002, 100.5, 1e-4});
  EXPECT_TRUE(AllClose(act, ref, /*rtol=*/0.01, /*atol=*/1e-3));
  ExpectAllClose(act, ref, 0.01, 1e-3);
}

TEST(AllClose, ToleranceIsAtolPlusRtolTimesReference) {
  HostTensor ref = Make(f64, {1}, {100});
  // allowed = 0.5 + 0.01 * 100 = 1.5
  EXPECT_TRUE(AllClose(Make(f64, {1}, {101.5}), ref, 0.01, 0.5));
  EXPECT_FALSE(AllClose(Make(f64, {1}, {101.51}), ref, 0.01, 0.5));
}

TEST(AllClose, ReportsCountAndWorstElementsByIndex) {
  HostTensor ref = Make(f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor act = Make(f64, {2, 3}, {1, 2.5, 3, 4, 5, 16});
  const std::string report = Report(act, ref, 0, 0.1);
  EXPECT_THAT(report, HasSubstr("2 of 6 elements (33.3%) are not close"));
  EXPECT_THAT(report, HasSubstr("atol=0.1, rtol=0"));
  EXPECT_THAT(report, HasSubstr("actual f64[2, 3], reference f64[2, 3]"));
  EXPECT_THAT(report, HasSubstr("max abs error 10 at [1, 2]"));
  // Worst first: [1, 2] (off by 10) before [0, 1] (off by 0.5).
  const size_t worst = report.find("[1, 2]: actual 16, reference 6");
  const size_t second = report.find("[0, 1]: actual 2.5, reference 2");
  ASSERT_NE(worst, std::string::npos) << report;
  ASSERT_NE(second, std::string::npos) << report;
  EXPECT_LT(worst, second);
  EXPECT_THAT(report, HasSubstr("|diff| 10 > allowed 0.1"));
}

TEST(AllClose, ListsOnlyTheWorstFew) {
  std::vector<double> ref(100, 1.0), act(100, 1.0);
  for (int i = 0; i < 100; ++i) act[i] = 1.0 + 0.01 * (i + 1);  // all off
  const std::string report =
      Report(Make(f64, {10, 10}, act), Make(f64, {10, 10}, ref), 0, 1e-3, 3);
  EXPECT_THAT(report, HasSubstr("100 of 100 elements"));
  EXPECT_THAT(report, HasSubstr("worst 3:"));
  EXPECT_THAT(report, HasSubstr("[9, 9]: actual 2"));
  EXPECT_THAT(report, HasSubstr("[9, 8]: actual 1.99"));
  EXPECT_THAT(report, HasSubstr("[9, 7]: actual 1.98"));
  EXPECT_THAT(report, Not(HasSubstr("[9, 6]")));
}

TEST(AllClose, NanIsNeverCloseButEqualInfinitiesAre) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(
      AllClose(Make(f64, {2}, {inf, -inf}), Make(f64, {2}, {inf, -inf}), 0, 0));
  EXPECT_FALSE(AllClose(Make(f64, {1}, {inf}), Make(f64, {1}, {1e300}), 1, 1));
  const std::string report =
      Report(Make(f64, {3}, {1, nan, 3}), Make(f64, {3}, {1, 2, 3}), 0, 1);
  EXPECT_THAT(report, HasSubstr("1 of 3 elements"));
  EXPECT_THAT(report, HasSubstr("1 NaN"));
  EXPECT_THAT(report, HasSubstr("[1]: actual nan"));
  EXPECT_FALSE(AllClose(Make(f64, {1}, {nan}), Make(f64, {1}, {nan}), 0, 1));
}

TEST(AllClose, ComparesAcrossDtypesAfterRounding) {
  // 0.1 in f16 is 0.0999755859375: close at f16's precision, not at 1e-6.
  HostTensor half = Make(f16, {1}, {0.1});
  HostTensor exact = Make(f64, {1}, {0.1});
  EXPECT_TRUE(AllClose(half, exact, 1e-3, 0));
  EXPECT_THAT(Report(half, exact, 1e-6, 0),
              AllOf(HasSubstr("actual f16[1], reference f64[1]"),
                    HasSubstr("[0]: actual 0.0999756, reference 0.1")));
}

TEST(AllClose, ShapeMismatchIsReported) {
  EXPECT_THAT(
      Report(Make(f32, {2, 3}, std::vector<double>(6, 1)),
             Make(f32, {3, 2}, std::vector<double>(6, 1)), 0, 0),
      HasSubstr("shapes differ: actual f32[2, 3], reference f32[3, 2]"));
}

TEST(AllClose, NegativeToleranceIsReported) {
  HostTensor t = Make(f32, {1}, {1});
  EXPECT_THAT(Report(t, t, -1, 0), HasSubstr("rtol and atol must be >= 0"));
}

TEST(AllClose, SpansWithShape) {
  const std::vector<float> ref = {1, 2, 3, 4, 5, 6};
  std::vector<float> act = ref;
  const std::vector<int64_t> shape = {1, 2, 3};
  EXPECT_TRUE(AllClose(act, ref, shape, 0, 0));
  act[4] = 7;
  ::testing::AssertionResult r = AllClose(act, ref, shape, 0, 0.5);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("1 of 6 elements"));
  EXPECT_THAT(r.message(), HasSubstr("[0, 1, 1]: actual 7, reference 5"));
  EXPECT_THAT(AllClose(act, ref, std::vector<int64_t>{4}, 0, 0).message(),
              HasSubstr("shape f32[4] has 4 elements, but actual has 6"));
  const std::vector<double> dref = {1, 2}, dact = {1, 2.5};
  EXPECT_THAT(AllClose(dact, dref, std::vector<int64_t>{2}, 0, 0).message(),
              HasSubstr("[1]: actual 2.5, reference 2"));
}

TEST(ExpectAllClose, FailsNonFatallyWithTheReport) {
  HostTensor ref = Make(f64, {2, 2}, {1, 2, 3, 4});
  HostTensor act = Make(f64, {2, 2}, {1, 2, 3, 5});
  EXPECT_NONFATAL_FAILURE(ExpectAllClose(act, ref, 0, 0.5),
                          "1 of 4 elements (25%) are not close");
  EXPECT_NONFATAL_FAILURE(ExpectAllClose(act, ref, 0, 0.5),
                          "[1, 1]: actual 5, reference 4");
  const std::vector<float> fa = {1, 9}, fr = {1, 2};
  EXPECT_NONFATAL_FAILURE(ExpectAllClose(fa, fr, std::vector<int64_t>{2}, 0, 0),
                          "[1]: actual 9");
}

TEST(ExpectAllClose, ReportsAtTheCallersLine) {
  HostTensor ref = Make(f64, {1}, {1});
  HostTensor act = Make(f64, {1}, {2});
  ::testing::TestPartResultArray failures;
  int line = 0;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &failures);
    line = __LINE__ + 1;
    ExpectAllClose(act, ref, 0, 0);
  }
  ASSERT_EQ(failures.size(), 1);
  EXPECT_EQ(failures.GetTestPartResult(0).line_number(), line);
  EXPECT_THAT(failures.GetTestPartResult(0).file_name(),
              HasSubstr("all_close_test.cc"));
  EXPECT_TRUE(failures.GetTestPartResult(0).nonfatally_failed());
}

}  // namespace
}  // namespace tessel::testing
