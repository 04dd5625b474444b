// RandomTensor: seeded, never zero, within range, rounded to the dtype.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "tessel/host_tensor.h"
#include "tessel/testing.h"

namespace tessel::testing {
namespace {

using ::testing::HasSubstr;

TEST(RandomTensor, SameSeedSameValuesOtherSeedOtherValues) {
  absl::StatusOr<HostTensor> a = RandomTensor(f32, {16, 16}, 7);
  absl::StatusOr<HostTensor> b = RandomTensor(f32, {16, 16}, 7);
  absl::StatusOr<HostTensor> c = RandomTensor(f32, {16, 16}, 8);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->to_doubles(), b->to_doubles());
  EXPECT_NE(a->to_doubles(), c->to_doubles());
}

TEST(RandomTensor, NeverZeroAndWithinRange) {
  for (DataType dtype : {f16, bf16, f32, f64, fp8_e4m3, fp8_e5m2}) {
    absl::StatusOr<HostTensor> t = RandomTensor(dtype, {64, 64}, 3);
    ASSERT_TRUE(t.ok()) << dtype_name(dtype) << ": " << t.status();
    EXPECT_EQ(t->dtype(), dtype);
    EXPECT_EQ(t->shape(), (std::vector<int64_t>{64, 64}));
    int negative = 0;
    std::set<double> distinct;
    for (double x : t->to_doubles()) {
      ASSERT_NE(x, 0) << dtype_name(dtype);
      ASSERT_GE(std::abs(x), 1.0 / 32 * 0.9) << dtype_name(dtype);
      ASSERT_LE(std::abs(x), 1.0) << dtype_name(dtype);
      negative += x < 0;
      distinct.insert(x);
    }
    // Both signs, and many values (fp8 has few to give).
    EXPECT_GT(negative, 64 * 64 / 4) << dtype_name(dtype);
    EXPECT_LT(negative, 64 * 64 * 3 / 4) << dtype_name(dtype);
    EXPECT_GT(distinct.size(), 20u) << dtype_name(dtype);
  }
}

TEST(RandomTensor, HonoursTheRange) {
  absl::StatusOr<HostTensor> t =
      RandomTensor(f32, {1000}, 1, {.low = 2, .high = 3, .min_abs = 0});
  ASSERT_TRUE(t.ok());
  for (double x : t->to_doubles()) {
    EXPECT_GE(x, 2);
    EXPECT_LE(x, 3);
  }
}

TEST(RandomTensor, IntegersAreNeverZero) {
  absl::StatusOr<HostTensor> t =
      RandomTensor(i32, {1000}, 5, {.low = -3, .high = 3});
  ASSERT_TRUE(t.ok()) << t.status();
  std::set<int64_t> seen;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    seen.insert(t->get_flat_int(i));
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-3, -2, -1, 1, 2, 3}));
  absl::StatusOr<HostTensor> u =
      RandomTensor(u8, {1000}, 5, {.low = -5, .high = 300});
  ASSERT_TRUE(u.ok()) << u.status();
  for (int64_t i = 0; i < u->num_elements(); ++i) {
    EXPECT_GE(u->get_flat_int(i), 1);
    EXPECT_LE(u->get_flat_int(i), 255);
  }
}

TEST(RandomTensor, BadRequestsAreStatuses) {
  EXPECT_THAT(
      RandomTensor(f32, {4}, 1, {.low = 1, .high = 0}).status().message(),
      HasSubstr("low <= high"));
  EXPECT_THAT(RandomTensor(f32, {4}, 1, {.low = -0.01, .high = 0.01})
                  .status()
                  .message(),
              HasSubstr("no value lies in"));
  EXPECT_THAT(
      RandomTensor(i32, {4}, 1, {.low = -0.5, .high = 0.5}).status().message(),
      HasSubstr("no nonzero i32 value"));
  EXPECT_THAT(RandomTensor(f16, {4}, 1, {.low = 0, .high = 1e-9, .min_abs = 0})
                  .status()
                  .message(),
              HasSubstr("round to zero in f16"));
  EXPECT_EQ(RandomTensor(bool_, {4}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RandomTensor(f32, {-1}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RandomFloats, MatchesTheF32Tensor) {
  absl::StatusOr<std::vector<float>> v = RandomFloats(100, 9);
  absl::StatusOr<HostTensor> t = RandomTensor(f32, {100}, 9);
  ASSERT_TRUE(v.ok() && t.ok());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(static_cast<double>((*v)[i]), t->get_flat(i));
    EXPECT_NE((*v)[i], 0.0f);
  }
}

}  // namespace
}  // namespace tessel::testing
