#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tessel/registry.h"

namespace tessel {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(KernelParamsTest, ReadsTypedValues) {
  const json j = {{"M", 4096},     {"alpha", 0.5},    {"causal", true},
                  {"mode", "fwd"}, {"dtype", "bf16"}, {"big", 1ull << 40}};
  KernelParams params(j);
  EXPECT_EQ(*params.Int("M"), 4096);
  EXPECT_EQ(*params.Int("big"), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(*params.Number("alpha"), 0.5);
  EXPECT_DOUBLE_EQ(*params.Number("M"), 4096.0);  // an integer is a number
  EXPECT_TRUE(*params.Bool("causal"));
  EXPECT_EQ(*params.String("mode"), "fwd");
  EXPECT_EQ(*params.Dtype("dtype"), bf16);
  EXPECT_TRUE(params.CheckAllUsed().ok());
}

TEST(KernelParamsTest, DefaultsApplyOnlyToMissingKeys) {
  const json j = {{"block_m", "64"}};
  KernelParams params(j);
  EXPECT_EQ(*params.Int("block_n", 128), 128);
  EXPECT_EQ(*params.Dtype("c_dtype", f16), f16);
  EXPECT_EQ(*params.IntInRange("stages", 1, 8, 3), 3);
  absl::StatusOr<int64_t> m = params.Int("block_m", 128);
  EXPECT_THAT(m.status().message(),
              HasSubstr("params.block_m: expected an integer, got \"64\""));
}

TEST(KernelParamsTest, ErrorsNameThePathAndTheProblem) {
  const json j = {{"M", 1.5},  {"flag", 1}, {"dtype", "f17"},
                  {"name", 3}, {"K", -4},   {"x", "y"}};
  KernelParams params(j, "kernels[3].params");
  EXPECT_EQ(params.Int("M").status().message(),
            "kernels[3].params.M: expected an integer, got 1.5 (number)");
  EXPECT_EQ(params.Int("N").status().message(),
            "kernels[3].params.N: missing (expected an integer)");
  EXPECT_THAT(params.Bool("flag").status().message(),
              HasSubstr("flag: expected true or false, got 1 (number)"));
  EXPECT_THAT(params.Dtype("dtype").status().message(),
              HasSubstr("dtype: unknown dtype \"f17\""));
  EXPECT_THAT(params.String("name").status().message(),
              HasSubstr("name: expected a string, got 3 (number)"));
  EXPECT_EQ(params.IntInRange("K", 1, 100).status().message(),
            "kernels[3].params.K: -4 is outside [1, 100]");
  EXPECT_THAT(params.Number("x").status().message(),
              HasSubstr("x: expected a number"));
}

TEST(KernelParamsTest, CheckAllUsedNamesTheFirstUnreadKey) {
  const json j = {{"M", 1}, {"blok_m", 64}};
  KernelParams params(j);
  ASSERT_TRUE(params.Int("M").ok());
  ASSERT_TRUE(params.Int("block_m", 128).ok());
  EXPECT_EQ(params.CheckAllUsed().message(),
            "params.blok_m: unknown parameter (known: M, block_m)");
}

TEST(KernelParamsTest, NonObjectParamsAreAnError) {
  const json j = json::array({1, 2});
  KernelParams params(j);
  EXPECT_THAT(params.Int("M").status().message(),
              HasSubstr("params: expected an object, got array"));
}

}  // namespace
}  // namespace tessel
