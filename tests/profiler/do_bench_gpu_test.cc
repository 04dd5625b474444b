// do_bench on a GPU: times a spin kernel compiled through the jit. Checks
// sanity (positive, ordered statistics, longer spins take longer, graph mode
// batches calls), never an exact time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cuda.h>

#include <cstdint>

#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "jit/nvrtc.h"
#include "tessel/profiler.h"
#include "tessel/testing.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

// Spins for `cycles` SM clocks: a kernel of known, tunable length.
const jit::CudaSource kSpin{
    .text =
        "extern \"C\" __global__ void spin(long long cycles) {\n"
        "  const long long start = clock64();\n"
        "  while (clock64() - start < cycles) {}\n"
        "}\n",
    .entry = "spin"};

class DoBenchGpuTest : public testing::GpuTest {
 protected:
  void SetUp() override {
    testing::GpuTest::SetUp();
    if (IsSkipped()) return;
    absl::StatusOr<jit::LoadedKernel> kernel =
        jit::KernelCache::Default().GetKernel(kSpin, {}, {jit::ArgSpec::I64()});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    spin_ = *kernel;
  }

  absl::StatusOr<BenchResult> TimeSpin(int64_t cycles, BenchOptions options) {
    return do_bench(
        [&](CUstream stream) {
          jit::KernelArgs args;
          args.Add(static_cast<long long>(cycles));
          return spin_.Launch({.grid = {1}, .block = {1}, .stream = stream},
                              args);
        },
        options);
  }

  jit::LoadedKernel spin_;
};

void ExpectOrdered(const BenchResult& r) {
  EXPECT_GT(r.min_ms, 0);
  EXPECT_LE(r.min_ms, r.median_ms);
  EXPECT_LE(r.median_ms, r.max_ms);
  EXPECT_LE(r.min_ms, r.mean_ms);
  EXPECT_LE(r.mean_ms, r.max_ms);
  for (size_t i = 1; i < r.quantiles_ms.size(); ++i) {
    EXPECT_LE(r.quantiles_ms[i - 1], r.quantiles_ms[i]);
  }
}

TEST_F(DoBenchGpuTest, TimesASpinKernelSanely) {
  absl::StatusOr<BenchResult> r = TimeSpin(
      1'000'000, {.warmup_ms = 5, .rep_ms = 30, .quantiles = {0.1, 0.5, 0.9}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->ms, 0);
  EXPECT_DOUBLE_EQ(r->ms, r->median_ms);
  ASSERT_EQ(r->quantiles_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(r->quantiles_ms[1], r->median_ms);
  ExpectOrdered(*r);
  EXPECT_GE(r->reps, 5);
  EXPECT_EQ(r->calls_per_sample, 1);
  // A million cycles at any clock below 5 GHz is over 0.2 ms.
  EXPECT_GT(r->median_ms, 0.2);
}

TEST_F(DoBenchGpuTest, LongerSpinsTakeLonger) {
  const BenchOptions options = {.warmup_ms = 2, .rep_ms = 20};
  absl::StatusOr<BenchResult> short_run = TimeSpin(100'000, options);
  absl::StatusOr<BenchResult> long_run = TimeSpin(1'000'000, options);
  ASSERT_TRUE(short_run.ok() && long_run.ok())
      << short_run.status() << long_run.status();
  EXPECT_GT(long_run->median_ms, 3 * short_run->median_ms);
}

TEST_F(DoBenchGpuTest, AllModeKeepsEverySample) {
  absl::StatusOr<BenchResult> r =
      TimeSpin(100'000, {.warmup_ms = 1,
                         .rep_ms = 5,
                         .flush_l2 = false,
                         .return_mode = ReturnMode::kAll,
                         .min_reps = 7,
                         .max_reps = 7});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reps, 7);
  ASSERT_EQ(r->times_ms.size(), 7u);
  for (double t : r->times_ms) EXPECT_GT(t, 0);
  ExpectOrdered(*r);
}

TEST_F(DoBenchGpuTest, CudaGraphBatchesShortKernels) {
  absl::StatusOr<BenchResult> r =
      TimeSpin(1'000, {.warmup_ms = 2, .rep_ms = 20, .use_cuda_graph = true});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->calls_per_sample, 1);
  EXPECT_GT(r->ms, 0);
  ExpectOrdered(*r);
  // Without launch gaps a 1000-cycle spin is a few microseconds per call.
  EXPECT_LT(r->median_ms, 0.05);
}

TEST_F(DoBenchGpuTest, FnErrorsEndTheRun) {
  int calls = 0;
  absl::StatusOr<BenchResult> r = do_bench([&](CUstream) {
    ++calls;
    return absl::InternalError("kernel exploded");
  });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("kernel exploded"));
  EXPECT_EQ(calls, 1);
}

TEST_F(DoBenchGpuTest, LaunchingOffTheStreamBreaksCaptureWithAClearError) {
  absl::StatusOr<BenchResult> r = do_bench(
      [&](CUstream) {
        jit::KernelArgs args;
        args.Add(static_cast<long long>(10));
        // The legacy default stream, not the one given.
        return spin_.Launch({.grid = {1}, .block = {1}}, args);
      },
      {.warmup_ms = 1, .rep_ms = 1, .use_cuda_graph = true});
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("capturing a CUDA graph"));
}

}  // namespace
}  // namespace tessel
