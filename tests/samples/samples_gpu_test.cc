// Every sample on the GPU against its float64 reference, at small and
// ragged sizes (the same cases as the interpreter test). Skips, saying why,
// without a GPU; TESSEL_REQUIRE_GPU=1 turns the skip into a failure.
#include <gtest/gtest.h>

#include "samples/execute.h"
#include "tessel/testing.h"
#include "tests/samples/sample_cases.h"

namespace tessel::samples {
namespace {

class GpuSampleTest : public ::testing::TestWithParam<SampleCase> {
 protected:
  void SetUp() override { TESSEL_SKIP_WITHOUT_GPU(); }
};

TEST_P(GpuSampleTest, MatchesFloat64Reference) {
  absl::StatusOr<Workload> w = GetParam().make();
  ASSERT_TRUE(w.ok()) << w.status();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    if (const KnownGap* gap = FindCodegenGap(GetParam().name, arch)) {
      GTEST_SKIP() << "the codegen lacks " << gap->missing
                   << " (samples_compile_test tracks it)";
    }
  }
  absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kGpu});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->backend, Backend::kGpu);
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok) << check->report;
}

INSTANTIATE_TEST_SUITE_P(Samples, GpuSampleTest,
                         ::testing::ValuesIn(SmallCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tessel::samples
