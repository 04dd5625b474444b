// Every kernel tessel's tests and samples build (tests/tools/listed_kernels.h:
// the manifest's samples and seed kernels, the seed cases, the IR test
// programs, every program the interpreter suites run) goes through the
// sm_90a lowering, the codegen and NVRTC, without a GPU: a program the CPU
// target runs is never rejected by the GPU lowering. A failure names the
// kernel and the Status.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/nvrtc.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"
#include "tests/tools/listed_kernels.h"
#include "tools/manifest.h"

namespace tessel {
namespace {

using listing::ListedKernel;

constexpr char kArch[] = "sm_90a";

std::vector<ListedKernel> Kernels() {
  absl::StatusOr<tools::Manifest> manifest = tools::LoadManifest(
      absl::StrCat(TESSEL_SOURCE_DIR, "/samples/kernels.json"));
  if (!manifest.ok()) {
    ADD_FAILURE() << "samples/kernels.json: " << manifest.status();
    return {};
  }
  std::vector<ListedKernel> out;
  for (ListedKernel& k : listing::ListedKernels(*manifest)) {
    bool for_arch = k.archs.empty();
    for (const std::string& a : k.archs) for_arch |= a == kArch;
    if (for_arch) out.push_back(std::move(k));
  }
  return out;
}

class CompilesForSm90a : public ::testing::TestWithParam<ListedKernel> {};

TEST_P(CompilesForSm90a, LoweringAndNvrtcAcceptIt) {
  const ListedKernel& k = GetParam();
  absl::StatusOr<ir::Program> program = k.program(kArch);
  ASSERT_TRUE(program.ok()) << k.name << ": build: " << program.status();
  if (k.runs_on_cpu) {
    absl::StatusOr<CompiledKernel> cpu =
        compile(*program, {.target = Target::cpu()});
    ASSERT_TRUE(cpu.ok()) << k.name << ": compile(cpu): " << cpu.status();
  }
  CompileOptions options = k.options;
  options.target = Target::cuda(kArch);
  absl::StatusOr<runtime::Lowered> lowered = runtime::Lower(*program, options);
  ASSERT_TRUE(lowered.ok())
      << k.name << ": lowering for " << kArch << ": " << lowered.status();
  absl::StatusOr<jit::Cubin> cubin =
      jit::Compile(lowered->generated.source, lowered->jit_options);
  ASSERT_TRUE(cubin.ok()) << k.name << ": NVRTC for " << kArch << ": "
                          << cubin.status();
}

INSTANTIATE_TEST_SUITE_P(ListedKernels, CompilesForSm90a,
                         ::testing::ValuesIn(Kernels()), [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tessel
