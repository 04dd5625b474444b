// TuneValue, TuneConfig and TuneSpace: values, printing, JSON, enumeration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessel/autotune.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

TEST(TuneValue, KindsAndPrinting) {
  TuneValue i = 128, b = true, s = "NT";
  EXPECT_TRUE(i.is_int());
  EXPECT_TRUE(b.is_bool());
  EXPECT_TRUE(s.is_string());
  EXPECT_EQ(i.int_value(), 128);
  EXPECT_TRUE(b.bool_value());
  EXPECT_EQ(s.string_value(), "NT");
  EXPECT_EQ(i.ToString(), "128");
  EXPECT_EQ(b.ToString(), "true");
  EXPECT_EQ(s.ToString(), "NT");
  EXPECT_FALSE(TuneValue(1) == TuneValue(true));
  EXPECT_EQ(TuneValue(int64_t{1} << 40).int_value(), int64_t{1} << 40);
}

TEST(TuneConfig, SetFindAndTypedReads) {
  TuneConfig c{{"block_m", 128}, {"swizzle", true}, {"layout", "NN"}};
  c.Set("block_m", 64);  // replaces, keeps the position
  EXPECT_EQ(c.ToString(), "block_m=64 swizzle=true layout=NN");
  EXPECT_EQ(c.Int("block_m", 0), 64);
  EXPECT_EQ(c.Int("block_n", 7), 7);
  EXPECT_TRUE(c.Bool("swizzle", false));
  EXPECT_EQ(c.String("layout", ""), "NN");
  EXPECT_TRUE(c.Has("layout"));
  EXPECT_EQ(c.Find("nope"), nullptr);
  EXPECT_EQ(*c.GetInt("block_m"), 64);
  EXPECT_EQ(c.GetInt("nope").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<int64_t> wrong = c.GetInt("layout");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("\"layout\" is NN"));
  EXPECT_EQ(c.GetBool("block_m").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TuneConfig().ToString(), "(empty)");
}

TEST(TuneConfigDeathTest, WrongKindReadIsALoudBug) {
  TuneConfig c{{"layout", "NN"}};
  EXPECT_DEATH(c.Int("layout", 0), "is not an integer");
}

TEST(TuneConfig, JsonRoundTripKeepsOrderAndKinds) {
  TuneConfig c{{"z", 1}, {"a", false}, {"m", "x y"}};
  EXPECT_EQ(c.ToJson(), R"({"z":1,"a":false,"m":"x y"})");
  absl::StatusOr<TuneConfig> back = TuneConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), c.ToString());
  EXPECT_TRUE(*back == c);
}

TEST(TuneConfig, FromJsonRejectsWhatItCannotHold) {
  for (const char* bad : {"[1,2]", "{\"x\":1.5}", "{\"x\":[1]}", "{\"x\":null}",
                          "{\"x\":", "", "42"}) {
    EXPECT_EQ(TuneConfig::FromJson(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(TuneConfig, EqualityIgnoresOrder) {
  TuneConfig a{{"x", 1}, {"y", 2}};
  TuneConfig b{{"y", 2}, {"x", 1}};
  TuneConfig c{{"x", 1}, {"y", 3}};
  TuneConfig d{{"x", 1}};
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a == d);
  EXPECT_FALSE(d == a);
}

TEST(TuneSpace, ProductOrderFirstAxisSlowest) {
  absl::StatusOr<std::vector<TuneConfig>> configs =
      TuneSpace::Product({{"m", {64, 128}}, {"k", {32, 64, 128}}}).Enumerate();
  ASSERT_TRUE(configs.ok()) << configs.status();
  std::vector<std::string> printed;
  for (const TuneConfig& c : *configs) printed.push_back(c.ToString());
  EXPECT_THAT(printed, ::testing::ElementsAre("m=64 k=32", "m=64 k=64",
                                              "m=64 k=128", "m=128 k=32",
                                              "m=128 k=64", "m=128 k=128"));
}

TEST(TuneSpace, FilterDropsConfigs) {
  absl::StatusOr<std::vector<TuneConfig>> configs =
      TuneSpace::Product({{"m", {64, 128, 256}}, {"n", {64, 128, 256}}},
                         [](const TuneConfig& c) {
                           return c.Int("m", 0) * c.Int("n", 0) <= 128 * 128;
                         })
          .Enumerate();
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 6u);  // 9 minus 128x256, 256x128, 256x256 ...
  for (const TuneConfig& c : *configs) {
    EXPECT_LE(c.Int("m", 0) * c.Int("n", 0), 128 * 128) << c.ToString();
  }
}

TEST(TuneSpace, MixedKindsOfValues) {
  absl::StatusOr<std::vector<TuneConfig>> configs =
      TuneSpace::Product({{"swizzle", {false, true}}, {"layout", {"NN", "NT"}}})
          .Enumerate();
  ASSERT_TRUE(configs.ok());
  EXPECT_EQ(configs->back().ToString(), "swizzle=true layout=NT");
}

TEST(TuneSpace, ListKeepsItsOrder) {
  absl::StatusOr<std::vector<TuneConfig>> configs =
      TuneSpace::List({{{"m", 128}}, {{"m", 64}}}).Enumerate();
  ASSERT_TRUE(configs.ok());
  ASSERT_EQ(configs->size(), 2u);
  EXPECT_EQ((*configs)[0].Int("m", 0), 128);
}

TEST(TuneSpace, BadSpacesAreInvalidArgument) {
  struct Case {
    const char* what;
    TuneSpace space;
    const char* message;
  };
  std::vector<Case> cases = {
      {"empty list", TuneSpace::List({}), "empty"},
      {"default space", TuneSpace(), "empty"},
      {"no axes", TuneSpace::Product({}), "no axes"},
      {"empty axis", TuneSpace::Product({{"m", {}}}), "has no values"},
      {"unnamed axis", TuneSpace::Product({{"", {1}}}), "no name"},
      {"repeated axis", TuneSpace::Product({{"m", {1}}, {"m", {2}}}),
       "appears twice"},
      {"repeated value", TuneSpace::Product({{"m", {1, 1}}}), "appears twice"},
      {"repeated config",
       TuneSpace::List({{{"m", 1}, {"n", 2}}, {{"n", 2}, {"m", 1}}}),
       "appears twice"},
      {"all filtered",
       TuneSpace::Product({{"m", {1, 2}}},
                          [](const TuneConfig&) { return false; }),
       "rejected every config"},
      {"too large",
       TuneSpace::Product({{"a", std::vector<TuneValue>(1000, 1)},
                           {"b", std::vector<TuneValue>(1000, 1)},
                           {"c", std::vector<TuneValue>(2, 1)}}),
       "more than"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<TuneConfig>> r = c.space.Enumerate();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.what;
  }
}

TEST(TuneCandidate, ProgressLines) {
  TuneCandidate timed{.index = 2,
                      .total = 12,
                      .config = {{"block_m", 128}, {"block_n", 64}},
                      .outcome = TuneOutcome::kTimed,
                      .ms = 0.41234};
  EXPECT_EQ(timed.ToString(), "[3/12] block_m=128 block_n=64: 0.4123 ms");
  TuneCandidate failed{
      .index = 3,
      .total = 12,
      .config = {{"block_m", 256}},
      .outcome = TuneOutcome::kCompileFailed,
      .status = absl::ResourceExhaustedError("needs 300 KB\nlog line 2")};
  EXPECT_EQ(failed.ToString(),
            "[4/12] block_m=256: compile failed: needs 300 KB ...");
  TuneCandidate skipped{.index = 11, .total = 12, .config = {{"m", 1}}};
  EXPECT_EQ(skipped.ToString(), "[12/12] m=1: skipped (budget spent)");
  TuneCandidate check{.index = 0,
                      .total = 1,
                      .config = {{"m", 1}},
                      .outcome = TuneOutcome::kCheckFailed,
                      .status = absl::InternalError("C differs")};
  EXPECT_EQ(check.ToString(), "[1/1] m=1: check failed: C differs");
}

}  // namespace
}  // namespace tessel
