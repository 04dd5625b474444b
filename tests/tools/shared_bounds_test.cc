// Every listed kernel (tests/tools/listed_kernels.h), lowered for sm_90a and
// sm_80, touches no shared memory past its planned buffers
// (passes::CheckSharedBounds): NVRTC and the interpreter cannot see an
// access past the allocation, the GPU faults on it (mla_decode's reduce_sum
// scratch was planned for the accumulator's own rows and staged the whole
// tile). A kernel that does not lower for an arch is the compile tests'
// business, not this one's.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/passes/shared_bounds.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"
#include "tests/tools/listed_kernels.h"
#include "tools/manifest.h"

namespace tessel {
namespace {

using listing::ListedKernel;

struct Case {
  ListedKernel kernel;
  std::string arch;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel.name << "." << c.arch;
}

std::vector<Case> Cases() {
  absl::StatusOr<tools::Manifest> manifest = tools::LoadManifest(
      absl::StrCat(TESSEL_SOURCE_DIR, "/samples/kernels.json"));
  if (!manifest.ok()) {
    ADD_FAILURE() << "samples/kernels.json: " << manifest.status();
    return {};
  }
  std::vector<Case> out;
  for (ListedKernel& k : listing::ListedKernels(*manifest)) {
    for (const char* arch : {"sm_90a", "sm_80"}) {
      bool for_arch = k.archs.empty();
      for (const std::string& a : k.archs) for_arch |= a == arch;
      if (for_arch) out.push_back({k, arch});
    }
  }
  return out;
}

class SharedBounds : public ::testing::TestWithParam<Case> {};

TEST_P(SharedBounds, EveryAccessInsideItsPlannedBytes) {
  const Case& c = GetParam();
  absl::StatusOr<ir::Program> program = c.kernel.program(c.arch);
  if (!program.ok()) GTEST_SKIP() << program.status();
  CompileOptions options = c.kernel.options;
  options.target = Target::cuda(c.arch);
  absl::StatusOr<runtime::Lowered> lowered = runtime::Lower(*program, options);
  if (!lowered.ok()) GTEST_SKIP() << lowered.status();
  passes::SharedBoundsReport r = passes::CheckSharedBounds(lowered->state);
  EXPECT_TRUE(r.violations.empty())
      << c.kernel.name << " for " << c.arch << ":\n  "
      << absl::StrJoin(r.violations, "\n  ");
  // Every access bounded: an index the analysis cannot follow is a gap in
  // the check (teach shared_bounds.cc its form), not a pass.
  EXPECT_EQ(r.unbounded, 0)
      << c.kernel.name << " for " << c.arch << ": " << r.unbounded << " of "
      << r.checked + r.unbounded << " shared accesses not bounded";
}

INSTANTIATE_TEST_SUITE_P(Listed, SharedBounds, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = absl::StrCat(
                               info.param.kernel.name, "_", info.param.arch);
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace tessel
