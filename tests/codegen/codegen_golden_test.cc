// The generated CUDA and PTX of a few kernels, byte for byte: an mma.sync
// gemm for sm_80, a wgmma gemm for sm_90a, a row softmax + cumsum for
// sm_90a. Any change to the codegen's text shows here as a diff to review.
// The files are tests/codegen/golden/<kernel>.<arch>.{cu,ptx}.txt, the
// same bytes as tools/dump_generated_cuda.sh's <kernel>.<arch>.{cu,ptx}
// (.txt: they are not sources to format or compile).
//
// After an intended change, rewrite them and review the diff:
//   TESSEL_UPDATE_GOLDEN=1
//   build/release/tests/tools/tessel_codegen_golden_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/tools/generated_code.h"
#include "tests/tools/listed_kernels.h"

namespace tessel::listing {
namespace {

struct GoldenKernel {
  const char* name;  // a ListedKernel's name
  const char* arch;
};
void PrintTo(const GoldenKernel& g, std::ostream* os) {
  *os << g.name << " " << g.arch;
}

constexpr GoldenKernel kGoldens[] = {
    {"prog_gemm", "sm_80"},
    {"prog_wgmma_gemm", "sm_90a"},
    {"interp_row_softmax_cumsum_70x48", "sm_90a"},
};

std::string SourceDir() {
  const char* root = std::getenv("TESSEL_SOURCE_DIR");
  return root ? root : ".";
}

void ExpectFile(const std::string& path, const std::string& text) {
  if (std::getenv("TESSEL_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden " << path
                         << " (run with TESSEL_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "golden " << path;
}

class CodegenGolden : public ::testing::TestWithParam<GoldenKernel> {};

TEST_P(CodegenGolden, CudaAndPtxMatchTheirFiles) {
  static const absl::StatusOr<std::vector<ListedKernel>> kernels =
      ListedKernelsOfManifest(SourceDir() + "/samples/kernels.json");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const GoldenKernel& g = GetParam();
  const ListedKernel* kernel = nullptr;
  for (const ListedKernel& k : *kernels)
    if (k.name == g.name) kernel = &k;
  ASSERT_NE(kernel, nullptr) << g.name << " is not a listed kernel";
  GeneratedCode code = GenerateCode(*kernel, g.arch);
  ASSERT_TRUE(code.ok()) << code.cuda;
  ASSERT_FALSE(code.ptx.empty()) << g.name << ": the PTX emitter declined it";
  std::string base =
      absl::StrCat(SourceDir(), "/tests/codegen/golden/", g.name, ".", g.arch);
  ExpectFile(base + ".cu.txt", code.cuda);
  ExpectFile(base + ".ptx.txt", code.ptx);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CodegenGolden, ::testing::ValuesIn(kGoldens),
                         [](const auto& info) {
                           return absl::StrCat(info.param.name, "_",
                                               info.param.arch);
                         });

}  // namespace
}  // namespace tessel::listing
