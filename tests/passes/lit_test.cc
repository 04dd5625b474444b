// Per-pass golden tests in the style of LLVM's and Triton's lit tests: each
// file of tests/passes/lit/ is one test that runs ONE pass on its input and
// compares the dump after it with the expected text. A file is
//
//   // RUN: insert_barriers sm_80 [pass config switches...]
//   // What the test shows, in a sentence or two.
//   @T.prim_func                      <- the input: a dump (DumpState, or
//   def ...                              hand-written in its format) with
//   # state                              the "# state" section the pass
//   #   threads 128                      reads (src/passes/state_text.h)
//   // CHECK:
//   @T.prim_func                      <- the dump after the pass
//   ...
//
// The RUN line names the pass (pass_list.h), the arch (sm_80, sm_90a) and
// any PassConfig switches (disable_wgmma, pingpong_consumers,
// cluster_size=2, ...; the names of tools/manifest.cc's pass_config). The
// input must be in the printer's form: it is read back and printed again
// first, and must not change. Passes may be listed joined by commas
// ("layout_inference,warp_specialize") to make an input from an earlier
// one's output; a checked-in test runs one.
//
// After an intended change, rewrite the expected parts and review the diff:
//   TESSEL_UPDATE_GOLDEN=1 build/release/tests/passes/tessel_lit_test
// A new file is a new test once the binary is rebuilt (the list of tests is
// taken at build time).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/passes/pass_list.h"
#include "src/passes/state_text.h"
#include "tessel/target.h"

namespace tessel::passes {
namespace {

namespace fs = std::filesystem;

constexpr char kCheck[] = "// CHECK:\n";

struct LitFile {
  std::string header;  // the leading "//" lines
  std::string input;
  std::string expected;
};

LitFile Split(const std::string& text) {
  LitFile f;
  size_t body = 0;
  while (body < text.size() && text.compare(body, 2, "//") == 0)
    body = text.find('\n', body) + 1;
  f.header = text.substr(0, body);
  size_t check = text.find(kCheck, body);
  f.input = text.substr(
      body, check == std::string::npos ? std::string::npos : check - body);
  if (check != std::string::npos)
    f.expected = text.substr(check + sizeof(kCheck) - 1);
  return f;
}

// The PassConfig switch `name` ("cluster_size=2" for the one int) set.
bool SetSwitch(const std::string& word, PassConfig& c) {
  struct Switch {
    const char* name;
    bool PassConfig::*field;
  };
  constexpr Switch kSwitches[] = {
      {"disable_tma_lower", &PassConfig::disable_tma_lower},
      {"disable_warp_specialized", &PassConfig::disable_warp_specialized},
      {"disable_async_copy", &PassConfig::disable_async_copy},
      {"disable_thread_sync", &PassConfig::disable_thread_sync},
      {"disable_wgmma", &PassConfig::disable_wgmma},
      {"disable_persistent_grid", &PassConfig::disable_persistent_grid},
      {"pingpong_consumers", &PassConfig::pingpong_consumers},
      {"disable_tma_store_epilogue", &PassConfig::disable_tma_store_epilogue},
      {"consumer_gemm_turns", &PassConfig::consumer_gemm_turns},
      {"bulk_reduce_atomics", &PassConfig::bulk_reduce_atomics},
      {"wgmma_across_barriers", &PassConfig::wgmma_across_barriers},
  };
  for (const Switch& s : kSwitches) {
    if (word == s.name) {
      c.*s.field = true;
      return true;
    }
  }
  if (absl::StartsWith(word, "cluster_size=")) {
    c.cluster_size = std::atoi(word.c_str() + 13);
    return c.cluster_size > 0;
  }
  return false;
}

std::vector<std::string> LitFiles() {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(TESSEL_LIT_DIR))
    if (e.path().extension() == ".txt") out.push_back(e.path().stem());
  std::sort(out.begin(), out.end());
  return out;
}

class Lit : public ::testing::TestWithParam<std::string> {};

TEST_P(Lit, OnePassGivesTheExpectedDump) {
  const std::string path =
      absl::StrCat(TESSEL_LIT_DIR, "/", GetParam(), ".txt");
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  LitFile f = Split(text.str());
  ASSERT_TRUE(absl::StartsWith(f.header, "// RUN: "))
      << path << ": the first line must be // RUN: <pass> <arch>";
  std::string run = f.header.substr(8, f.header.find('\n') - 8);
  std::vector<std::string> words = absl::StrSplit(run, ' ', absl::SkipEmpty());
  ASSERT_GE(words.size(), 2u) << path << ": // RUN: <pass> <arch>";
  Target target = Target::cuda(words[1]);
  ASSERT_TRUE(target.status().ok()) << path << ": " << target.status();
  PassConfig config;
  for (size_t i = 2; i < words.size(); ++i)
    ASSERT_TRUE(SetSwitch(words[i], config))
        << path << ": unknown pass config switch " << words[i];

  absl::StatusOr<StateDump> input = ParseStateDump(f.input, target, config);
  ASSERT_TRUE(input.ok()) << path << ": input: " << input.status();
  ASSERT_EQ(DumpState(input->state), f.input)
      << path << ": the input is not in the printer's form";
  for (absl::string_view pass : absl::StrSplit(words[0], ',')) {
    absl::Status s = RunPass(input->state, std::string(pass));
    ASSERT_TRUE(s.ok()) << path << ": " << pass << ": " << s;
  }
  std::string got = DumpState(input->state);
  if (std::getenv("TESSEL_UPDATE_GOLDEN")) {
    std::ofstream(path) << f.header << f.input << kCheck << got;
    return;
  }
  EXPECT_EQ(got, f.expected)
      << path << " (TESSEL_UPDATE_GOLDEN=1 rewrites the expected part)";
  // The expected dump is an input too: a next pass's test may start there.
  absl::StatusOr<StateDump> output = ParseStateDump(got, target, config);
  ASSERT_TRUE(output.ok()) << path << ": output: " << output.status();
  EXPECT_EQ(DumpState(output->state), got) << path << ": output read back";
}

INSTANTIATE_TEST_SUITE_P(Files, Lit, ::testing::ValuesIn(LitFiles()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tessel::passes
