#include "jit/cache_key.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

CacheKeyFields FixedFields() {
  CacheKeyFields fields;
  fields.schema = 1;
  fields.tessel_version = "0.1.0";
  fields.source = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  fields.entry = "k";
  fields.headers = {{"a.cuh", "#define A 1\n"}, {"b.cuh", "#define B 2\n"}};
  fields.options = {"-arch=sm_90a", "-std=c++17", "-DN=4"};
  fields.nvrtc_version = "13.0";
  fields.arch = "sm_90a";
  return fields;
}

TEST(CacheKeyTest, GoldenValue) {
  // XXH3-128 of the length-prefixed fields (each: a tag byte, the length as
  // u64 little-endian, the bytes), checked against a one-shot XXH3_128bits of
  // that byte string built by hand. Changes only with the key scheme (then
  // bump kCacheSchemaVersion).
  EXPECT_EQ(ComputeCacheKey(FixedFields()), "ba8afcb7a60ed09cfb0ba760ef28869d");
}

TEST(CacheKeyTest, IsHex32) {
  const std::string key = ComputeCacheKey(FixedFields());
  ASSERT_EQ(key.size(), 32u);
  for (char c : key) EXPECT_TRUE(std::isxdigit(c) && !std::isupper(c)) << key;
}

TEST(CacheKeyTest, EveryFieldChangesTheKey) {
  const std::vector<std::function<void(CacheKeyFields&)>> changes = {
      [](CacheKeyFields& f) { f.schema = 2; },
      [](CacheKeyFields& f) { f.tessel_version = "0.1.1"; },
      [](CacheKeyFields& f) { f.source += " "; },
      [](CacheKeyFields& f) { f.entry = "k2"; },
      [](CacheKeyFields& f) { f.headers[0].name = "c.cuh"; },
      [](CacheKeyFields& f) { f.headers[1].content = "#define B 3\n"; },
      [](CacheKeyFields& f) {
        f.headers.push_back({"d.cuh", ""});
      },
      [](CacheKeyFields& f) { f.headers.pop_back(); },
      [](CacheKeyFields& f) { f.options.push_back("-lineinfo"); },
      [](CacheKeyFields& f) { f.options[2] = "-DN=8"; },
      [](CacheKeyFields& f) { f.nvrtc_version = "13.1"; },
      [](CacheKeyFields& f) { f.arch = "sm_80"; },
  };
  std::set<std::string> keys = {ComputeCacheKey(FixedFields())};
  for (const auto& change : changes) {
    CacheKeyFields fields = FixedFields();
    change(fields);
    keys.insert(ComputeCacheKey(fields));
  }
  EXPECT_EQ(keys.size(), changes.size() + 1);
}

TEST(CacheKeyTest, FieldBoundariesMatter) {
  CacheKeyFields a = FixedFields(), b = FixedFields();
  a.source = "ab";
  a.entry = "c";
  b.source = "a";
  b.entry = "bc";
  EXPECT_NE(ComputeCacheKey(a), ComputeCacheKey(b));
  a = b = FixedFields();
  a.options = {"-DA", "-DB"};
  b.options = {"-DA-DB"};
  EXPECT_NE(ComputeCacheKey(a), ComputeCacheKey(b));
}

TEST(CacheKeyTest, HeaderOrderDoesNotMatter) {
  CacheKeyFields a = FixedFields(), b = FixedFields();
  std::swap(b.headers[0], b.headers[1]);
  EXPECT_EQ(ComputeCacheKey(a), ComputeCacheKey(b));
}

TEST(CacheKeyTest, SameOptionsInAnotherOrderGiveTheSameKey) {
  const CudaSource source = testing::SaxpySource();
  CompileOptions a{.arch = "sm_90a", .defines = {{"X", "1"}, {"Y", "2"}}};
  CompileOptions b{.arch = "sm_90a", .defines = {{"Y", "2"}, {"X", "1"}}};
  absl::StatusOr<std::string> key_a = ComputeCacheKey(source, a);
  absl::StatusOr<std::string> key_b = ComputeCacheKey(source, b);
  ASSERT_TRUE(key_a.ok() && key_b.ok());
  EXPECT_EQ(*key_a, *key_b);
  b.defines[0].second = "3";
  EXPECT_NE(*key_a, *ComputeCacheKey(source, b));
}

TEST(CacheKeyTest, ShortcutMatchesTheFields) {
  const CudaSource source = testing::SaxpySource();
  const CompileOptions options{.arch = "sm_80", .fast_math = true};
  absl::StatusOr<CacheKeyFields> fields = MakeCacheKeyFields(source, options);
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->arch, "sm_80");
  EXPECT_EQ(fields->nvrtc_version, NvrtcVersion());
  EXPECT_EQ(ComputeCacheKey(*fields), *ComputeCacheKey(source, options));
}

}  // namespace
}  // namespace tessel::jit
