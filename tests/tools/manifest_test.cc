#include "tools/manifest.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/test_util.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFile;
using testing::SourcePath;

TEST(ManifestTest, ParsesEntries) {
  absl::StatusOr<Manifest> m = ParseManifest(R"({
    "version": 1,
    "kernels": [
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128}},
      {"name": "seed_mbarrier_gemm", "params": {"M": 128, "N": 128, "K": 128},
       "archs": ["sm_90a"], "fast_math": true, "comment": "Hopper only"},
      {"name": "no_params"}
    ]})");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->kernels.size(), 3u);
  EXPECT_EQ(m->kernels[0].name, "seed_gemm");
  EXPECT_EQ(m->kernels[0].params["M"], 256);
  EXPECT_EQ(m->kernels[1].archs, std::vector<std::string>{"sm_90a"});
  EXPECT_TRUE(m->kernels[1].fast_math);
  EXPECT_FALSE(m->kernels[1].lineinfo);
  EXPECT_TRUE(m->kernels[2].params.is_object());
  EXPECT_EQ(m->kernels[2].Path(), "kernels[2]");
  EXPECT_EQ(m->kernels[0].Describe(), R"(seed_gemm {"K":128,"M":256,"N":256})");
}

TEST(ManifestTest, SyntaxErrorsGiveLineAndColumn) {
  absl::StatusOr<Manifest> m = ParseManifest(
      "{\n  \"kernels\": [\n    {\"name\": \"a\",}\n  ]\n}", "kernels.json");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("kernels.json:3:"));
  EXPECT_THAT(m.status().message(), HasSubstr("not valid JSON"));
}

TEST(ManifestTest, StructureErrorsNameTheirJsonPath) {
  absl::StatusOr<Manifest> m = ParseManifest(R"({
    "version": 2, "kernel": [],
    "kernels": [
      {"name": "a", "params": {"M": 1}},
      {"params": {}},
      {"name": 7},
      {"name": "b", "params": [1, 2]},
      {"name": "c", "archs": ["sm_90a", "hopper"], "fast_math": "yes"},
      {"name": "d", "parms": {}},
      "e"
    ]})");
  ASSERT_FALSE(m.ok());
  const absl::string_view message = m.status().message();
  EXPECT_THAT(message, HasSubstr("version: expected 1"));
  EXPECT_THAT(message, HasSubstr("kernel: unknown field (expected one of "));
  EXPECT_THAT(message, HasSubstr("kernels[1].name: missing"));
  EXPECT_THAT(message,
              HasSubstr("kernels[2].name: expected a non-empty string, got 7"));
  EXPECT_THAT(message,
              HasSubstr("kernels[3].params: expected an object, got [1,2]"));
  EXPECT_THAT(message, HasSubstr("kernels[4].archs[1]: expected an arch such "
                                 "as \"sm_90a\", got \"hopper\""));
  EXPECT_THAT(message,
              HasSubstr("kernels[4].fast_math: expected true or false"));
  EXPECT_THAT(message, HasSubstr("kernels[5].parms: unknown field"));
  EXPECT_THAT(message, HasSubstr("kernels[6]: expected an object"));
  EXPECT_THAT(message, Not(HasSubstr("kernels[0]")));
}

TEST(ManifestTest, MissingOrWrongKernels) {
  EXPECT_THAT(ParseManifest("{}").status().message(),
              HasSubstr("kernels: missing"));
  EXPECT_THAT(ParseManifest(R"({"kernels": {}})").status().message(),
              HasSubstr("kernels: expected an array"));
  EXPECT_THAT(ParseManifest("[]").status().message(),
              HasSubstr("expected an object with a \"kernels\" array"));
  EXPECT_EQ(LoadManifest("/nonexistent/kernels.json").status().code(),
            absl::StatusCode::kNotFound);
}

// Hostile text is an InvalidArgument naming where, never an exception, a
// crash or zero jobs.
TEST(ManifestTest, HostileTextIsAnErrorWithItsPath) {
  auto error = [](const std::string& text) {
    absl::StatusOr<Manifest> m = ParseManifest(text, "m.json");
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << text;
    return std::string(m.status().message());
  };
  EXPECT_THAT(
      error(R"({"kernels": [{"name": "g", "params": {"factor": 1e309}}]})"),
      HasSubstr("m.json: kernels[0].params.factor: number 1e309 is out of "
                "range"));
  EXPECT_THAT(error(R"({"kernels": [{"name": "g"}, [1, -1e999]]})"),
              HasSubstr("kernels[1][1]: number -1e999 is out of range"));
  EXPECT_THAT(error(std::string(200000, '[')),
              HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(
      error(R"({"kernels": [{"name": "g", "params": )" + std::string(100, '[') +
            "1" + std::string(100, ']') + "}]}"),
      HasSubstr("kernels[0].params[0][0]"));
  EXPECT_THAT(error(R"({"kernels": [{"name": "g"}], "kernels": []})"),
              HasSubstr("m.json: kernels: duplicate key"));
  EXPECT_THAT(error(R"({"kernels": [{"name": "g", "name": "h"}]})"),
              HasSubstr("kernels[0].name: duplicate key"));
  EXPECT_THAT(error(R"({"kernels": [{"name": "g", "archs": ["sm_12"]}]})"),
              HasSubstr("kernels[0].archs[0]: sm_12 is older than sm_80"));
  EXPECT_THAT(error(R"({"kernels": [{"name": "g", "archs": ["sm_99"]}]})"),
              HasSubstr("kernels[0].archs[0]: sm_99 is not an arch this CUDA "
                        "toolkit's NVRTC compiles for (it supports sm_80"));
  EXPECT_THAT(error("{\n\"kernels\": [\"\xff\"]}"), HasSubstr("m.json:2:"));
  EXPECT_THAT(error(""), HasSubstr("not valid JSON"));
  EXPECT_TRUE(CheckSupportedArch("sm_90a").ok());
  EXPECT_TRUE(CheckSupportedArch("sm_80").ok());
  EXPECT_FALSE(CheckSupportedArch("sm_8").ok());
  EXPECT_FALSE(CheckSupportedArch("sm_90x").ok());
}

TEST(ManifestTest, ADirectoryIsNotAManifest) {
  testing::TempDir dir;
  absl::StatusOr<Manifest> m = LoadManifest(dir.path());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("is a directory"));
}

// Each arch gets its own build, its tiles sized for it (defect: the D = 128
// backward's two stages did not fit sm_80's shared memory).
TEST(ManifestTest, EveryEntryOfTheSamplesManifestFitsEachArch) {
  absl::StatusOr<Manifest> m = LoadManifest(SourcePath("samples/kernels.json"));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<std::string> archs = {"sm_90a", "sm_80"};
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*m, KernelRegistry::Global(), archs);
  ASSERT_TRUE(programs.ok()) << programs.status();
  int fits = 0;
  for (size_t i = 0; i < programs->size(); ++i) {
    for (const auto& [arch, program] : (*programs)[i]) {
      absl::Status s = CheckSharedMemoryFits(program, Target::cuda(arch));
      EXPECT_TRUE(s.ok()) << m->kernels[i].Describe() << " " << arch << ": "
                          << s;
      fits += s.ok();
    }
  }
  EXPECT_EQ(fits, 2 * static_cast<int>(m->kernels.size()));
  // An explicit num_stages is the user's: two stages of D = 128 tiles do
  // not fit sm_80 (what the default was before it was chosen per arch).
  nlohmann::json params = {
      {"B", 1},         {"S", 256},       {"H", 1},
      {"DK", 128},      {"DV", 128},      {"block_k", 128},
      {"block_v", 128}, {"threads", 256}, {"num_stages", 2}};
  absl::StatusOr<Program> two = KernelRegistry::Global().Build(
      "linear_attention_bwd_dkdv", params, Target::sm80());
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(CheckSharedMemoryFits(*two, Target::sm80()).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(CheckSharedMemoryFits(*two, Target::sm90a()).ok());
}

// Parameter errors come from the kernels' factories (tools/seed_kernels.cc),
// prefixed with the entry's path.
TEST(ManifestTest, ParameterErrorsNameTheEntryAndTheParameter) {
  absl::StatusOr<Manifest> m = ParseManifest(R"({"kernels": [
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128}},
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128}},
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128}},
      {"name": "seed_gemm", "params": {"M": "256", "N": 256, "K": 128}},
      {"name": "seed_gemm", "params": {"M": 256, "N": 0, "K": 128}},
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128,
                                       "blok_m": 64}},
      {"name": "seed_gemm", "params": {"M": 256, "N": 256, "K": 128,
                                       "c_dtype": "f12"}}
    ]})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*m, KernelRegistry::Global(), {"sm_90a"});
  ASSERT_FALSE(programs.ok());
  const absl::string_view message = programs.status().message();
  EXPECT_THAT(message,
              HasSubstr("kernels[3].params.M: expected an integer, got "
                        "\"256\" (string)"));
  EXPECT_THAT(message, HasSubstr("kernels[4].params.N: 0 is outside [1, "));
  EXPECT_THAT(message,
              HasSubstr("kernels[5].params.blok_m: unknown parameter"));
  EXPECT_THAT(message,
              HasSubstr("kernels[6].params.c_dtype: unknown dtype \"f12\""));
  EXPECT_THAT(message, Not(HasSubstr("kernels[0]")));
}

TEST(ManifestTest, UnknownKernelListsTheRegisteredOnes) {
  absl::StatusOr<Manifest> m =
      ParseManifest(R"({"kernels": [{"name": "seed_gemmm"}]})");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*m, KernelRegistry::Global(), {"sm_90a"});
  EXPECT_THAT(programs.status().message(),
              HasSubstr("kernels[0].name: unknown kernel \"seed_gemmm\""));
  EXPECT_THAT(programs.status().message(), HasSubstr("registered kernels: "));
  EXPECT_THAT(programs.status().message(),
              HasSubstr(" seed_gemm, seed_gemm_dynamic_m,"));
  KernelRegistry empty;
  EXPECT_THAT(BuildManifestPrograms(*m, empty, {"sm_90a"}).status().message(),
              HasSubstr("(none: is the registering code linked?"));
}

TEST(ManifestTest, BuildsProgramsOfEveryEntry) {
  absl::StatusOr<Manifest> m =
      LoadManifest(SourcePath("tests/tools/testdata/small.json"));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*m, KernelRegistry::Global(), {"sm_90a"});
  ASSERT_TRUE(programs.ok()) << programs.status();
  ASSERT_EQ(programs->size(), 3u);
  EXPECT_EQ((*programs)[0].at("sm_90a").name(), "fused_chunk_kernel");
}

TEST(ManifestTest, SamplesManifestParsesAndBuilds) {
  absl::StatusOr<Manifest> m = LoadManifest(SourcePath("samples/kernels.json"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->kernels.empty());
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*m, KernelRegistry::Global(), {"sm_90a"});
  EXPECT_TRUE(programs.ok()) << programs.status();
}

// docs/kernels.schema.json and the parser accept the same fields.
TEST(ManifestTest, SchemaListsTheParsersFields) {
  nlohmann::json schema = nlohmann::json::parse(
      ReadFile(SourcePath("docs/kernels.schema.json")), nullptr, false);
  ASSERT_TRUE(schema.is_object());
  auto keys = [](const nlohmann::json& properties) {
    std::set<std::string> names;
    for (const auto& [key, value] : properties.items()) names.insert(key);
    return names;
  };
  const std::vector<std::string>& top = ManifestTopLevelFields();
  const std::vector<std::string>& entry = ManifestEntryFields();
  EXPECT_EQ(keys(schema["properties"]),
            std::set<std::string>(top.begin(), top.end()));
  EXPECT_EQ(keys(schema["$defs"]["kernel"]["properties"]),
            std::set<std::string>(entry.begin(), entry.end()));
  EXPECT_EQ(schema["additionalProperties"], false);
  EXPECT_EQ(schema["$defs"]["kernel"]["additionalProperties"], false);
}

}  // namespace
}  // namespace tessel::tools
