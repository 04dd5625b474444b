// The command-line conventions of the tools and samples: --version
// everywhere, a usage error is one line with a suggestion, --flag value and
// --flag=value alike, the same --arch in tools and samples, a header on
// `tessel-cache list`, hit / miss counts in `tessel-cache stats --json`.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tessel/version.h"
#include "tests/tools/test_util.h"
#include "tools/cli.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCommand;
using testing::RunResult;
using testing::SourcePath;
using ::testing::StartsWith;
using testing::TempDir;

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A usage error: exit 2, one line naming the program, no help text.
void ExpectOneLineUsageError(const RunResult& r, const std::string& program) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(Lines(r.output), 1) << r.output;
  EXPECT_THAT(r.output, StartsWith(program + ": ")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("see --help"));
  EXPECT_THAT(r.output, Not(HasSubstr("usage:")));
}

TEST(DidYouMeanTest, SuggestsTheClosestWordOfATypo) {
  const std::vector<std::string> commands = {"stats", "list", "verify", "prune",
                                             "clear"};
  EXPECT_EQ(DidYouMean("stat", commands), " (did you mean \"stats\"?)");
  EXPECT_EQ(DidYouMean("lsit", commands), " (did you mean \"list\"?)");
  EXPECT_EQ(DidYouMean("frobnicate", commands), "");
  EXPECT_EQ(DidYouMean("--arhc", {"--arch", "--jobs"}),
            " (did you mean \"--arch\"?)");
}

TEST(CliTest, CacheToolVersionAndUsageErrors) {
  TempDir scratch, cache;
  auto tool = [&](std::vector<std::string> args) {
    args.insert(args.begin(), TESSEL_CACHE_BIN);
    return RunCommand(args, scratch);
  };
  RunResult version = tool({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.output,
              StartsWith("tessel-cache " + std::string(tessel::version())));

  RunResult stat = tool({"--cache-dir", cache.path(), "stat"});
  ExpectOneLineUsageError(stat, "tessel-cache");
  EXPECT_THAT(stat.output,
              HasSubstr("unknown command \"stat\" (did you mean \"stats\"?)"));
  RunResult flag = tool({"--cache-dri=" + cache.path(), "stats"});
  ExpectOneLineUsageError(flag, "tessel-cache");
  EXPECT_THAT(flag.output, HasSubstr("did you mean \"--cache-dir\"?"));
  ExpectOneLineUsageError(tool({}), "tessel-cache");
  ExpectOneLineUsageError(tool({"--cache-dir", cache.path(), "list", "--json"}),
                          "tessel-cache");

  // list: a header even when empty; --cache-dir=DIR as --cache-dir DIR.
  RunResult list = tool({"--cache-dir=" + cache.path(), "list"});
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(Lines(list.output), 1);
  EXPECT_THAT(list.output, StartsWith("key "));
  EXPECT_THAT(list.output, HasSubstr("arch"));
  EXPECT_THAT(list.output, HasSubstr("last use"));

  RunResult stats = tool({"--cache-dir", cache.path(), "stats", "--json"});
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  nlohmann::json j = nlohmann::json::parse(stats.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << stats.output;
  EXPECT_EQ(j["entries"], 0);
  EXPECT_EQ(j["hits"], 0);
  EXPECT_EQ(j["misses"], 0);
}

TEST(CliTest, WarmupVersionAndUsageErrors) {
  TempDir scratch;
  RunResult version = RunCommand({TESSEL_WARMUP_BIN, "--version"}, scratch);
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.output,
              StartsWith("tessel-warmup " + std::string(tessel::version())));
  RunResult typo = RunCommand({TESSEL_WARMUP_BIN, "--arhc", "sm_90a"}, scratch);
  ExpectOneLineUsageError(typo, "tessel-warmup");
  EXPECT_THAT(typo.output, HasSubstr("did you mean \"--arch\"?"));
  ExpectOneLineUsageError(
      RunCommand({TESSEL_WARMUP_BIN, "--arch", "sm_90a"}, scratch),
      "tessel-warmup");
  // A list of no archs is that, not a missing flag.
  RunResult no_arch = RunCommand(
      {TESSEL_WARMUP_BIN, "--manifest", "m.json", "--arch", ",,"}, scratch);
  EXPECT_EQ(no_arch.exit_code, 2);
  EXPECT_EQ(Lines(no_arch.output), 1) << no_arch.output;
  EXPECT_THAT(no_arch.output, HasSubstr("--arch ',,': names no arch"));
}

#ifdef TESSEL_SAMPLE_GEMM_BIN
TEST(CliTest, SamplesTakeSeparateValuesAndSuggestFlags) {
  TempDir scratch;
  RunResult version =
      RunCommand({TESSEL_SAMPLE_GEMM_BIN, "--version"}, scratch);
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.output, HasSubstr(std::string(tessel::version())));

  // --causal true is a flag and its value (it was "unexpected argument");
  // the mistyped flag after it is named with its correction, in one line.
  RunResult flash = RunCommand({TESSEL_SAMPLE_FLASH_BIN, "--backend", "cpu",
                                "--causal", "true", "--sise", "small"},
                               scratch);
  ExpectOneLineUsageError(flash, "flash_attention");
  EXPECT_THAT(flash.output,
              HasSubstr("unknown flag --sise (did you mean --size?)"));

  // --layout NT and the tools' --arch, on a small GEMM on the interpreter,
  // also compiled for sm_80 through the cache.
  TempDir cache;
  RunResult gemm =
      RunCommand({TESSEL_SAMPLE_GEMM_BIN, "--backend", "cpu", "--layout", "NT",
                  "--size", "64x64x64", "--arch", "sm_80"},
                 scratch, {"TESSEL_CACHE_DIR=" + cache.path()});
  EXPECT_EQ(gemm.exit_code, 0) << gemm.output;
  EXPECT_THAT(gemm.output, HasSubstr("pass"));
}
#endif

#ifdef TESSEL_HELLO_JIT_BIN
TEST(CliTest, HelloJitHelps) {
  TempDir scratch;
  RunResult help = RunCommand({TESSEL_HELLO_JIT_BIN, "--help"}, scratch);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, StartsWith("usage: hello_jit"));
  EXPECT_THAT(help.output, Not(HasSubstr("cache:")));  // it did not run
  RunResult bad = RunCommand({TESSEL_HELLO_JIT_BIN, "--bogus"}, scratch);
  ExpectOneLineUsageError(bad, "hello_jit");
}
#endif

}  // namespace
}  // namespace tessel::tools
