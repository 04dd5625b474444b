// Every listed kernel (listed_kernels.h: manifest kernels, seed cases, IR
// test programs, interpreter programs), for sm_80 and sm_90a, before and
// after each of the 9 passes: its dump (DumpState: IR + "# state") reads
// back (ParseStateDump) and prints the same text; the pass run on the
// read-back state gives the same dump as on the original; and the codegen
// gives the same CUDA from the final read-back state. The IR test programs
// also run under the sm_90a schedules the listing does not use. This is what
// makes a dump a valid input of a one-pass lit test (tests/passes/lit/).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/codegen/cuda_codegen.h"
#include "src/passes/pass_list.h"
#include "src/passes/state_text.h"
#include "tests/tools/listed_kernels.h"
#include "tools/manifest.h"

namespace tessel {
namespace {

using listing::ListedKernel;

struct Case {
  ListedKernel kernel;
  std::string arch;
  std::string variant;  // "": the kernel's own pass config
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel.name << " " << c.arch << " " << c.variant;
}

// sm_90a schedules the listing's own configs do not take, on the IR test
// programs: they put the facts of ping-pong consumers, clusters, gemm turns
// and the other switches into the state.
struct Variant {
  const char* name;
  PassConfig config;
};
const Variant kVariants[] = {
    {"pingpong", {.pingpong_consumers = true}},
    {"cluster2", {.cluster_size = 2}},
    {"gemm_turns", {.consumer_gemm_turns = true}},
    {"across_barriers", {.wgmma_across_barriers = true}},
    {"bulk_atomics", {.bulk_reduce_atomics = true}},
    {"no_wgmma", {.disable_wgmma = true}},
};

std::vector<Case> Cases() {
  absl::StatusOr<tools::Manifest> manifest = tools::LoadManifest(
      absl::StrCat(TESSEL_SOURCE_DIR, "/samples/kernels.json"));
  if (!manifest.ok()) {
    ADD_FAILURE() << "samples/kernels.json: " << manifest.status();
    return {};
  }
  std::vector<Case> out;
  for (const ListedKernel& k : listing::ListedKernels(*manifest)) {
    for (const char* arch : {"sm_80", "sm_90a"}) {
      bool for_arch = k.archs.empty();
      for (const std::string& a : k.archs) for_arch |= a == arch;
      if (for_arch) out.push_back({k, arch, ""});
    }
    if (!k.name.starts_with("prog_")) continue;
    for (const Variant& v : kVariants) {
      ListedKernel variant = k;
      variant.options.pass_config = v.config;
      out.push_back({variant, "sm_90a", v.name});
    }
  }
  return out;
}

class PassTextRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(PassTextRoundTrip, EveryPassRunsTheSameFromItsDump) {
  const Case& c = GetParam();
  absl::StatusOr<ir::Program> program = c.kernel.program(c.arch);
  ASSERT_TRUE(program.ok()) << program.status();
  passes::LoweringState state;
  state.program = *program;
  state.target = Target::cuda(c.arch);
  state.config = c.kernel.options.pass_config;
  absl::StatusOr<passes::StateDump> back;
  for (const std::string& pass : passes::PassNames()) {
    const std::string before = passes::DumpState(state);
    back = passes::ParseStateDump(before, state.target, state.config);
    ASSERT_TRUE(back.ok()) << "before " << pass << ": " << back.status() << "\n"
                           << before;
    ASSERT_EQ(passes::DumpState(back->state), before) << "before " << pass;
    absl::Status ran = passes::RunPass(state, pass);
    absl::Status ran_back = passes::RunPass(back->state, pass);
    ASSERT_EQ(ran_back, ran) << pass;
    if (!ran.ok()) return;  // refused for this arch, from text alike
    ASSERT_EQ(passes::DumpState(back->state), passes::DumpState(state))
        << pass << " from the dump of\n"
        << before;
  }
  const std::string after = passes::DumpState(state);
  back = passes::ParseStateDump(after, state.target, state.config);
  ASSERT_TRUE(back.ok()) << "after the last pass: " << back.status();
  ASSERT_EQ(passes::DumpState(back->state), after) << "after the last pass";
  absl::StatusOr<codegen::GeneratedKernel> cuda = codegen::EmitCuda(state);
  absl::StatusOr<codegen::GeneratedKernel> cuda_back =
      codegen::EmitCuda(back->state);
  ASSERT_EQ(cuda_back.status(), cuda.status());
  if (cuda.ok()) {
    EXPECT_EQ(cuda_back->source.text, cuda->source.text);
  }
}

INSTANTIATE_TEST_SUITE_P(Listed, PassTextRoundTrip,
                         ::testing::ValuesIn(Cases()), [](const auto& info) {
                           std::string name = absl::StrCat(
                               info.param.kernel.name, "_", info.param.arch,
                               info.param.variant.empty() ? "" : "_",
                               info.param.variant);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tessel
