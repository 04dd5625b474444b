// The samples' shared --tune pieces without a GPU: flags to options and
// pinned parameters, and the workloads TuneWorkload refuses.
#include "samples/tune_workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "samples/gemm.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

TEST(TuneWorkload, OptionsFromFlags) {
  SampleArgs args;
  args.backend = Backend::kGpu;
  // Without --tune, its companions are errors, not silently ignored.
  EXPECT_THAT(TuneOptionsFromFlags(args, Flags::FromMap({{"retune", "true"}}))
                  .status()
                  .message(),
              HasSubstr("go with --tune"));
  EXPECT_TRUE(TuneOptionsFromFlags(args, Flags::FromMap({})).ok());

  args.tune = true;
  absl::StatusOr<TuneOptions> o = TuneOptionsFromFlags(
      args, Flags::FromMap({{"tune-budget", "30"}, {"retune", "true"}}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->budget, absl::Seconds(30));
  EXPECT_TRUE(o->retune);
  EXPECT_NE(o->progress, nullptr);

  args.backend = Backend::kCpu;
  EXPECT_THAT(TuneOptionsFromFlags(args, Flags::FromMap({})).status().message(),
              HasSubstr("needs --backend=gpu"));
}

TEST(TuneWorkload, FlagsPinTheirParameters) {
  TuneConfig current;
  current.Set("block_m", 128);
  current.Set("threads", 256);
  const TuneConfig pinned =
      PinnedByFlags(Flags::FromMap({{"block-m", "128"}}), current,
                    {{"block-m", "block_m"}, {"threads", "threads"}});
  EXPECT_EQ(pinned.ToString(), "block_m=128");
  const TuneSpace::Axis axis = PinnedAxis("block_m", {64, 128, 256}, pinned);
  ASSERT_EQ(axis.values.size(), 1u);
  EXPECT_EQ(axis.values[0].int_value(), 128);
  EXPECT_EQ(PinnedAxis("threads", {128, 256}, pinned).values.size(), 2u);
}

TEST(TuneWorkload, RefusesAWorkloadOfSeveralSteps) {
  absl::StatusOr<Workload> w =
      GemmWorkload(GemmConfig{.M = 64, .N = 64, .K = 64});
  ASSERT_TRUE(w.ok()) << w.status();
  w->steps.push_back(w->steps[0]);
  absl::StatusOr<TuneResult> r =
      TuneWorkload(*w, "gemm", TuneSpace::List({TuneConfig{}}),
                   [](const TuneConfig&) -> absl::StatusOr<Program> {
                     return absl::InternalError("not reached");
                   },
                   {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("2 steps"));
}

TEST(TuneWorkload, SaysWhyWithoutAGpu) {
  if (testing::GpuUnavailableReason().empty()) {
    GTEST_SKIP() << "a GPU is present: the GPU test covers the tune itself";
  }
  absl::StatusOr<Workload> w =
      GemmWorkload(GemmConfig{.M = 64, .N = 64, .K = 64});
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<TuneResult> r =
      TuneWorkload(*w, "gemm", TuneSpace::List({TuneConfig{}}),
                   [](const TuneConfig&) -> absl::StatusOr<Program> {
                     return absl::InternalError("not reached");
                   },
                   {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("--tune times candidates"));
}

}  // namespace
}  // namespace tessel::samples
