#include "tools/manifest.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "samples/flash_attention_bwd.h"
#include "samples/linear_attention.h"
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

// "pass_config": PassConfig's fields by name; the rest keep their defaults.
TEST(ManifestTest, ParsesPassConfigAndNamesItsErrors) {
  absl::StatusOr<Manifest> m = ParseManifest(R"({"kernels": [
      {"name": "a", "pass_config": {"bulk_reduce_atomics": true,
                                    "wgmma_across_barriers": true,
                                    "cluster_size": 2}},
      {"name": "b", "pass_config": {"disable_tma_lower": true,
                                    "disable_warp_specialized": false}},
      {"name": "c", "pass_config": {}}
    ]})");
  ASSERT_TRUE(m.ok()) << m.status();
  const PassConfig& a = m->kernels[0].pass_config;
  EXPECT_TRUE(a.bulk_reduce_atomics);
  EXPECT_TRUE(a.wgmma_across_barriers);
  EXPECT_EQ(a.cluster_size, 2);
  EXPECT_FALSE(a.disable_tma_lower);
  EXPECT_TRUE(m->kernels[1].pass_config.disable_tma_lower);
  EXPECT_FALSE(m->kernels[1].pass_config.disable_warp_specialized);
  EXPECT_EQ(m->kernels[2].pass_config.ToString(), PassConfig().ToString());
  EXPECT_EQ(m->kernels[0].Describe(),
            "a [bulk_reduce_atomics wgmma_across_barriers cluster_size=2]");
  EXPECT_EQ(m->kernels[1].Describe(), "b [disable_tma_lower]");
  EXPECT_EQ(m->kernels[2].Describe(), "c");

  absl::StatusOr<Manifest> bad = ParseManifest(R"({"kernels": [
      {"name": "a", "pass_config": {"bulk_reduce_atomic": true}},
      {"name": "b", "pass_config": {"disable_wgmma": 1}},
      {"name": "c", "pass_config": {"cluster_size": 4}},
      {"name": "d", "pass_config": [true]},
      {"name": "e", "pass_config": {"dump_ir": "/tmp/x"}}
    ]})");
  ASSERT_FALSE(bad.ok());
  const absl::string_view message = bad.status().message();
  EXPECT_THAT(message, HasSubstr("kernels[0].pass_config.bulk_reduce_atomic: "
                                 "unknown field (expected one of "
                                 "disable_tma_lower, "));
  EXPECT_THAT(message, HasSubstr("kernels[1].pass_config.disable_wgmma: "
                                 "expected true or false, got 1"));
  EXPECT_THAT(message, HasSubstr("kernels[2].pass_config.cluster_size: "
                                 "expected 1 or 2, got 4"));
  EXPECT_THAT(message, HasSubstr("kernels[3].pass_config: expected an object"));
  EXPECT_THAT(message, HasSubstr("kernels[4].pass_config.dump_ir: unknown"));
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

// The samples' manifest warms what the samples run: every
// (flash_attention_bwd entry, arch) compiles with the pass config the
// sample's workload gives its main step on that arch, and each of the two
// archs is warmed; linear attention's mbarrier forward likewise.
TEST(ManifestTest, SampleEntriesCarryTheSamplesPassConfig) {
  absl::StatusOr<Manifest> m = LoadManifest(SourcePath("samples/kernels.json"));
  ASSERT_TRUE(m.ok()) << m.status();
  std::map<std::string, int> warmed;  // "<params> <arch>"
  for (const ManifestEntry& e : m->kernels) {
    if (e.name != "flash_attention_bwd") continue;
    samples::FlashAttentionBackwardConfig c{
        .B = e.params["B"].get<int>(),
        .S = e.params["S"].get<int>(),
        .H = e.params["H"].get<int>(),
        .D = e.params["D"].get<int>(),
        .heads_kv = e.params.value("heads_kv", 0),
        .causal = e.params.value("causal", false)};
    ASSERT_FALSE(e.archs.empty())
        << e.Describe() << ": each arch its own pass config";
    for (const std::string& arch : e.archs) {
      const int sm = arch == "sm_90a" ? 90 : 80;
      EXPECT_EQ(e.pass_config.ToString(),
                samples::BackwardMainPassConfig(samples::WithDeviceTile(c, sm))
                    .ToString())
          << e.Path() << " " << e.Describe() << " on " << arch;
      ++warmed[absl::StrCat(e.params.dump(), " ", arch)];
    }
  }
  ASSERT_FALSE(warmed.empty());
  for (const auto& [job, count] : warmed) EXPECT_EQ(count, 1) << job;
  // linear attention's mbarrier forward runs on the cp.async pipeline
  // everywhere.
  int mbarrier = 0;
  for (const ManifestEntry& e : m->kernels) {
    if (e.name != "linear_attention_fwd_mbarrier") continue;
    ++mbarrier;
    EXPECT_EQ(e.pass_config.ToString(),
              samples::LinearAttentionMbarrierPassConfig().ToString())
        << e.Path();
  }
  EXPECT_GT(mbarrier, 0);
  for (const auto& [job, count] : warmed) {
    const std::string params = job.substr(0, job.rfind(' '));
    EXPECT_TRUE(warmed.count(params + " sm_80") &&
                warmed.count(params + " sm_90a"))
        << params;
  }
}

TEST(ManifestTest, ADirectoryIsNotAManifest) {
  testing::TempDir dir;
  absl::StatusOr<Manifest> m = LoadManifest(dir.path());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("is a directory"));
}

// Each arch gets its own build, its tiles sized for it (defects: the D = 128
// backward's two stages did not fit sm_80's shared memory; the GEMM's
// default tile, the D = 128 linear attention and the variable-length
// forward did not fit the 99 KB of sm_86, sm_89 and sm_120).
TEST(ManifestTest, EveryEntryOfTheSamplesManifestFitsEachArch) {
  absl::StatusOr<Manifest> m = LoadManifest(SourcePath("samples/kernels.json"));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<std::string> archs = {"sm_90a", "sm_80",  "sm_86",
                                          "sm_89",  "sm_100", "sm_120"};
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
  int jobs = 0;  // each entry on its archs among these, or on all of them
  for (const ManifestEntry& e : m->kernels) {
    for (const std::string& arch : archs) {
      jobs += e.archs.empty() ||
              std::find(e.archs.begin(), e.archs.end(), arch) != e.archs.end();
    }
  }
  EXPECT_EQ(fits, jobs);
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
  const nlohmann::json& config =
      schema["$defs"]["kernel"]["properties"]["pass_config"];
  const std::vector<std::string>& switches = ManifestPassConfigFields();
  EXPECT_EQ(keys(config["properties"]),
            std::set<std::string>(switches.begin(), switches.end()));
  EXPECT_EQ(config["additionalProperties"], false);
}

}  // namespace
}  // namespace tessel::tools
