// Helpers for gtest suites that test tessel kernels (tessel's own and yours).
// Link tessel::testing.
//
// clang-format off
//   TEST(MyKernel, MatchesReference) {
//     TESSEL_SKIP_WITHOUT_GPU();   // skips, saying why
//     tessel::HostTensor a =
//         tessel::testing::RandomTensor(tessel::f16, {64, 32}, /*seed=*/1)
//             .value();
//     tessel::HostTensor out = RunMyKernel(a);
//     tessel::testing::ExpectAllClose(out, Reference(a), /*rtol=*/1e-2,
//                                     /*atol=*/1e-3);
//   }
// clang-format on
//
//   class MyGpuTest : public tessel::testing::GpuTest {};  // skips in SetUp
//
// ExpectAllClose fails at the caller's line with the number of mismatched
// elements and the worst of them by their multi-dimensional index:
//
//   3 of 2048 elements (0.146%) are not close: |actual - reference| >
//   atol + rtol * |reference| (atol=0.001, rtol=0.01); actual f16[64, 32],
//   reference f64[64, 32]; max abs error 0.25 at [12, 3]
//     [12, 3]: actual 1.5, reference 1.25, |diff| 0.25 > allowed 0.0135
//     ...
//
// Set TESSEL_REQUIRE_GPU=1 on a GPU machine to turn the skips into failures
// (a broken driver then cannot pass silently).
#ifndef TESSEL_TESTING_H_
#define TESSEL_TESTING_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/dtype.h"
#include "tessel/host_tensor.h"

namespace tessel::testing {

// Empty when a CUDA driver and device 0 are usable; otherwise why not.
std::string GpuUnavailableReason();

// True when TESSEL_REQUIRE_GPU is set to a non-empty value other than "0".
bool GpuRequired();

// Skips the current test (from its body or SetUp) when there is no GPU, or
// fails it when GpuRequired().
#define TESSEL_SKIP_WITHOUT_GPU()                                           \
  do {                                                                      \
    if (const std::string tessel_gpu_why =                                  \
            ::tessel::testing::GpuUnavailableReason();                      \
        !tessel_gpu_why.empty()) {                                          \
      if (::tessel::testing::GpuRequired()) {                               \
        GTEST_FAIL() << "TESSEL_REQUIRE_GPU is set but " << tessel_gpu_why; \
      }                                                                     \
      GTEST_SKIP() << "needs a GPU: " << tessel_gpu_why;                    \
    }                                                                       \
  } while (0)

// A fixture whose tests skip (saying why) without a GPU.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { TESSEL_SKIP_WITHOUT_GPU(); }
};

// How many mismatches the report lists, worst first.
inline constexpr int kDefaultWorstReported = 8;

// Success when every element satisfies
// |actual - reference| <= atol + rtol * |reference| (NaN never does; equal
// infinities do) and the shapes agree; otherwise the report described above.
// Dtypes may differ (an f16 result against an f64 reference).
::testing::AssertionResult AllClose(const HostTensor& actual,
                                    const HostTensor& reference, double rtol,
                                    double atol,
                                    int worst_reported = kDefaultWorstReported);
// The same over flat row-major values with an explicit shape.
::testing::AssertionResult AllClose(std::span<const float> actual,
                                    std::span<const float> reference,
                                    std::span<const int64_t> shape, double rtol,
                                    double atol,
                                    int worst_reported = kDefaultWorstReported);
::testing::AssertionResult AllClose(std::span<const double> actual,
                                    std::span<const double> reference,
                                    std::span<const int64_t> shape, double rtol,
                                    double atol,
                                    int worst_reported = kDefaultWorstReported);

// EXPECT-style (the test goes on) checks that report at the caller's line.
void ExpectAllClose(
    const HostTensor& actual, const HostTensor& reference, double rtol,
    double atol, std::source_location where = std::source_location::current());
void ExpectAllClose(
    std::span<const float> actual, std::span<const float> reference,
    std::span<const int64_t> shape, double rtol, double atol,
    std::source_location where = std::source_location::current());

struct RandomOptions {
  // Values are drawn uniformly from [low, high] less (-min_abs, min_abs), so
  // no element is zero or tiny; integer dtypes draw integers, never 0.
  double low = -1;
  double high = 1;
  double min_abs = 1.0 / 32;
};

// A tensor of seeded random values (the same seed gives the same tensor on
// every platform), each rounded to dtype and never zero. InvalidArgument for
// a bad shape, bool, or a range with no admissible value.
absl::StatusOr<HostTensor> RandomTensor(DataType dtype,
                                        std::vector<int64_t> shape,
                                        uint64_t seed,
                                        const RandomOptions& options = {});
// `count` such floats (f32), for code that works on plain vectors.
absl::StatusOr<std::vector<float>> RandomFloats(
    int64_t count, uint64_t seed, const RandomOptions& options = {});

}  // namespace tessel::testing

#endif  // TESSEL_TESTING_H_
