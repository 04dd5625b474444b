// Every kernel of every sample (host-wrapper helpers included) goes through
// the scheduler, the CUDA codegen and NVRTC for sm_80 and sm_90a, without a
// GPU. Kernels the codegen cannot build yet are listed in kNotYetSupported
// with the error they must give: such a test passes while the codegen still
// fails that way and fails (asking for the entry to go) once it compiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "samples/execute.h"
#include "tests/samples/sample_cases.h"

namespace tessel::samples {
namespace {

class CompileTest
    : public ::testing::TestWithParam<std::tuple<SampleCase, const char*>> {};

TEST_P(CompileTest, CompilesWithNvrtc) {
  const auto& [c, arch] = GetParam();
  absl::StatusOr<Workload> w = c.make();
  ASSERT_TRUE(w.ok()) << w.status();
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
                                            ::testing::Values("sm_80",
                                                              "sm_90a")),
                         [](const auto& info) {
                           std::string arch = std::get<1>(info.param);
                           return std::get<0>(info.param).name + "_" +
                                  (arch == "sm_80" ? "sm80" : "sm90a");
                         });

}  // namespace
}  // namespace tessel::samples
