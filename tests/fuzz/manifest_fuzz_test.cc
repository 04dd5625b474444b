// Fuzz target of the manifest reader: seeded mutations of valid manifests
// and random JSON through ParseManifest and BuildManifestPrograms. Every
// input must come back as a manifest or as an InvalidArgument / NotFound
// naming where; an exception, a crash or another code fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/tessel.h"
#include "tests/fuzz/fuzz_budget.h"
#include "tools/manifest.h"

namespace tessel::tools {
namespace {

namespace T = tessel;
using ::testing::StartsWith;

// A factory reading every kind of parameter, its tiles sized per target.
absl::StatusOr<Program> MakeScale(const nlohmann::json& json,
                                  const Target& target) {
  KernelParams params(json);
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 4096, 64);
  if (!n.ok()) return n.status();
  absl::StatusOr<double> factor = params.Number("factor", 2.0);
  if (!factor.ok()) return factor.status();
  absl::StatusOr<bool> negate = params.Bool("negate", false);
  if (!negate.ok()) return negate.status();
  absl::StatusOr<std::string> label = params.String("label", "x");
  if (!label.ok()) return label.status();
  absl::StatusOr<DataType> dtype = params.Dtype("dtype", T::f32);
  if (!dtype.ok()) return dtype.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  const int tile = target.sm() >= 90 ? 128 : 64;
  T::ProgramBuilder p("scale");
  auto x = p.tensor("x", {*n}, *dtype);
  {
    T::Kernel kernel(T::ceildiv(*n, tile), {.threads = 64});
    auto [bx] = kernel.block_index();
    auto t = T::alloc_fragment({tile}, *dtype, "t");
    T::copy(x(bx * tile), t);
    for (auto i : T::Parallel(tile)) {
      T::Expr v = t(i) * T::Expr(*factor);
      t(i) = *negate ? -v : v;
    }
    T::copy(t, x(bx * tile));
  }
  return p.finish();
}

const std::vector<std::string>& Seeds() {
  static const auto* seeds = new std::vector<std::string>{
      R"({"$schema": "s.json", "version": 1, "comment": "c", "kernels": [
          {"name": "scale", "params": {"N": 256, "factor": 0.5}},
          {"name": "scale", "params": {"N": 100, "dtype": "f16",
           "negate": true, "label": "y"}, "archs": ["sm_90a"],
           "fast_math": true, "lineinfo": false, "comment": "h"},
          {"name": "scale"}]})",
      R"({"kernels": [{"name": "scale", "params": {"N": 4096}}]})",
      R"({"kernels": []})",
  };
  return *seeds;
}

// Tokens a mutation inserts: structure, hostile numbers, names, archs.
const std::vector<std::string>& Dictionary() {
  static const auto* words =
      new std::vector<std::string>{"{",
                                   "}",
                                   "[",
                                   "]",
                                   ",",
                                   ":",
                                   "\"",
                                   "\\",
                                   "\"kernels\"",
                                   "\"name\"",
                                   "\"params\"",
                                   "\"archs\"",
                                   "\"version\"",
                                   "\"scale\"",
                                   "\"sm_90a\"",
                                   "\"sm_80\"",
                                   "\"sm_12\"",
                                   "\"sm_99\"",
                                   "\"sm_\"",
                                   "\"N\"",
                                   "\"factor\"",
                                   "\"dtype\"",
                                   "\"f12\"",
                                   "1e309",
                                   "-1e999",
                                   "1e308",
                                   "4.9e-324",
                                   "18446744073709551616",
                                   "18446744073709551615",
                                   "-9223372036854775809",
                                   "0.5",
                                   "-1",
                                   "0",
                                   "true",
                                   "false",
                                   "null",
                                   "\"\\u0000\"",
                                   "\"\\ud800\"",
                                   "\xff",
                                   "\xc3\x28",
                                   "/*",
                                   "//",
                                   std::string(100, '['),
                                   std::string(100, '{'),
                                   "[[[[[[[[[[1]]]]]]]]]]",
                                   "\"N\": 1, \"N\": 2"};
  return *words;
}

std::string Mutate(std::string text, std::mt19937_64& rng) {
  auto pick = [&](size_t n) {
    return static_cast<size_t>(rng() % (n == 0 ? 1 : n));
  };
  const int steps = 1 + static_cast<int>(pick(4));
  for (int s = 0; s < steps; ++s) {
    const size_t at = pick(text.size() + 1);
    switch (pick(6)) {
      case 0:  // flip a byte
        if (!text.empty()) text[pick(text.size())] ^= 1 << pick(8);
        break;
      case 1:  // insert a word
        text.insert(at, Dictionary()[pick(Dictionary().size())]);
        break;
      case 2:  // delete a range
        text.erase(at, pick(16));
        break;
      case 3:  // repeat a range
        text.insert(at, text.substr(pick(text.size() + 1), pick(64)));
        break;
      case 4:  // a random byte
        text.insert(at, 1, static_cast<char>(pick(256)));
        break;
      default:  // splice another seed in
        text.insert(at, Seeds()[pick(Seeds().size())].substr(0, pick(200)));
        break;
    }
  }
  return text;
}

TEST(ManifestFuzzTest, EveryInputIsAManifestOrAnErrorNamingWhere) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  std::mt19937_64 rng(fuzz::FuzzSeed());
  fuzz::FuzzBudget budget(200000, 10.0);
  int parsed = 0, built = 0;
  while (budget.Next()) {
    const std::string& seed = Seeds()[rng() % Seeds().size()];
    const std::string text = Mutate(seed, rng);
    absl::StatusOr<Manifest> m = ParseManifest(text, "fuzz.json");
    if (!m.ok()) {
      ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument)
          << m.status() << "\ninput: " << text;
      ASSERT_THAT(std::string(m.status().message()), StartsWith("fuzz.json:"))
          << text;
      continue;
    }
    ++parsed;
    for (const ManifestEntry& e : m->kernels) {
      ASSERT_FALSE(e.name.empty()) << text;
      ASSERT_TRUE(e.params.is_object()) << text;
      for (const std::string& arch : e.archs) {
        ASSERT_TRUE(CheckSupportedArch(arch).ok()) << arch << " in " << text;
      }
    }
    absl::StatusOr<ManifestPrograms> programs =
        BuildManifestPrograms(*m, registry, {"sm_90a", "sm_80"});
    if (!programs.ok()) {
      const absl::StatusCode code = programs.status().code();
      ASSERT_TRUE(code == absl::StatusCode::kInvalidArgument ||
                  code == absl::StatusCode::kNotFound)
          << programs.status() << "\ninput: " << text;
      ASSERT_THAT(std::string(programs.status().message()),
                  StartsWith("manifest: "));
      continue;
    }
    ++built;
    ASSERT_EQ(programs->size(), m->kernels.size());
  }
  budget.Report("manifest");
  std::printf("manifest fuzz: %d parsed, %d built\n", parsed, built);
  // The mutations keep some inputs valid: the builder side is reached.
  EXPECT_GT(built, 0);
  EXPECT_GT(budget.done(), 1000);
}

}  // namespace
}  // namespace tessel::tools
