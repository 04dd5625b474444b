// The autotuner's key: stable for equal inputs, different for any change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "src/autotune/tune_key.h"
#include "tessel/version.h"

namespace tessel::autotuner {
namespace {

TuneRequest Request() {
  TuneRequest r;
  r.kernel = "gemm_NN";
  r.space = TuneSpace::Product({{"block_m", {64, 128}}, {"stages", {2, 3}}});
  r.args = {TensorView::Contiguous(uint64_t{0x1000}, f16, {512, 256}),
            TensorView::Contiguous(uint64_t{0x2000}, f16, {256, 512}),
            TensorView::Contiguous(uint64_t{0x3000}, f32, {512, 512})};
  return r;
}

const DeviceIdentity kH200{.name = "NVIDIA H200", .arch = "sm_90a"};

TuneKey KeyOf(const TuneRequest& r, const DeviceIdentity& device = kH200,
              const CompileOptions& compile = {.target = Target::sm90a()}) {
  absl::StatusOr<std::vector<TuneConfig>> configs = r.space.Enumerate();
  EXPECT_TRUE(configs.ok()) << configs.status();
  return MakeTuneKey(r, *configs, device, compile);
}

TEST(TuneKey, StableForEqualInputs) {
  TuneRequest a = Request(), b = Request();
  // Other device pointers, the same shapes: the same problem.
  b.args[0].data = 0xdead000;
  // The same configs with their parameters set in another order.
  b.space = TuneSpace::List({{{"stages", 2}, {"block_m", 64}},
                             {{"stages", 3}, {"block_m", 64}},
                             {{"stages", 2}, {"block_m", 128}},
                             {{"stages", 3}, {"block_m", 128}}});
  const std::string hash = KeyOf(a).Hash();
  EXPECT_EQ(hash.size(), 32u);
  EXPECT_THAT(hash, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(KeyOf(a).Hash(), hash);
  EXPECT_EQ(KeyOf(b).Hash(), hash);
  EXPECT_EQ(KeyOf(a).tessel_version, version());
}

TEST(TuneKey, EveryFieldChangesTheHash) {
  const std::string base = KeyOf(Request()).Hash();
  std::vector<std::pair<const char*, std::function<TuneKey()>>> changes = {
      {"kernel",
       [] {
         TuneRequest r = Request();
         r.kernel = "gemm_NT";
         return KeyOf(r);
       }},
      {"shape",
       [] {
         TuneRequest r = Request();
         r.args[0].shape = {512, 257};
         return KeyOf(r);
       }},
      {"dtype",
       [] {
         TuneRequest r = Request();
         r.args[2].dtype = f16;
         return KeyOf(r);
       }},
      {"strides",
       [] {
         TuneRequest r = Request();
         r.args[0].strides = {512, 1};
         return KeyOf(r);
       }},
      {"one arg fewer",
       [] {
         TuneRequest r = Request();
         r.args.pop_back();
         return KeyOf(r);
       }},
      {"key_extra",
       [] {
         TuneRequest r = Request();
         r.key_extra = "split_k=2";
         return KeyOf(r);
       }},
      {"device name",
       [] {
         return KeyOf(Request(), {.name = "NVIDIA H100", .arch = "sm_90a"});
       }},
      {"arch",
       [] {
         return KeyOf(Request(), {.name = "NVIDIA H200", .arch = "sm_80"});
       }},
      {"fast_math",
       [] {
         return KeyOf(Request(), kH200,
                      {.target = Target::sm90a(), .fast_math = true});
       }},
      {"pass config",
       [] {
         return KeyOf(Request(), kH200,
                      {.target = Target::sm90a(),
                       .pass_config = {.disable_async_copy = true}});
       }},
      {"a value more",
       [] {
         TuneRequest r = Request();
         r.space = TuneSpace::Product(
             {{"block_m", {64, 128}}, {"stages", {2, 3, 4}}});
         return KeyOf(r);
       }},
      {"a filter",
       [] {
         TuneRequest r = Request();
         r.space = TuneSpace::Product(
             {{"block_m", {64, 128}}, {"stages", {2, 3}}},
             [](const TuneConfig& c) { return c.Int("stages", 0) != 3; });
         return KeyOf(r);
       }},
      {"a value's kind",
       [] {
         TuneRequest r = Request();
         r.space = TuneSpace::Product(
             {{"block_m", {64, 128}}, {"stages", {"2", "3"}}});
         return KeyOf(r);
       }},
      {"tessel version",
       [] {
         TuneKey k = KeyOf(Request());
         k.tessel_version += "-next";
         return k;
       }},
  };
  std::set<std::string> seen = {base};
  for (const auto& [what, make] : changes) {
    const std::string hash = make().Hash();
    EXPECT_NE(hash, base) << what;
    EXPECT_TRUE(seen.insert(hash).second) << what << " collides";
  }
}

TEST(TuneKey, FieldsAreLengthPrefixed) {
  TuneKey a = KeyOf(Request()), b = a;
  a.kernel = "ab";
  a.extra = "c";
  b.kernel = "a";
  b.extra = "bc";
  EXPECT_NE(a.Hash(), b.Hash());
}

TEST(TuneKey, FileNameIsSafeAndReadable) {
  TuneRequest r = Request();
  TuneKey key = KeyOf(r);
  EXPECT_EQ(key.FileName(), "gemm_NN." + key.Hash() + ".json");
  key.kernel = "../evil name/x";
  EXPECT_EQ(key.FileName(), "___evil_name_x." + key.Hash() + ".json");
  key.kernel = std::string(100, 'k');
  EXPECT_EQ(key.FileName(), std::string(48, 'k') + "." + key.Hash() + ".json");
  key.kernel = "";
  EXPECT_EQ(key.FileName(), "kernel." + key.Hash() + ".json");
}

TEST(TuneKey, FieldsHoldTheInputs) {
  TuneKey key = KeyOf(Request());
  nlohmann::json fields = key.Fields();
  EXPECT_EQ(fields["kernel"], "gemm_NN");
  EXPECT_EQ(fields["tensors"][2], "f32[512,512]");
  EXPECT_EQ(fields["device"], "NVIDIA H200");
  EXPECT_EQ(fields["arch"], "sm_90a");
  EXPECT_EQ(fields["space"].size(), 4u);
  EXPECT_EQ(fields["space"][1]["stages"], 3);
}

}  // namespace
}  // namespace tessel::autotuner
