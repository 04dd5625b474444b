// Each seed kernel's printed IR against its golden file in tests/dsl/golden/.
// Regenerate with TESSEL_UPDATE_GOLDEN=1 (then review the diff).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/dsl/seed_programs.h"

namespace tessel {
namespace {

std::string GoldenPath(const std::string& name) {
  const char* root = std::getenv("TESSEL_SOURCE_DIR");
  std::string dir = root != nullptr ? root : ".";
  return dir + "/tests/dsl/golden/" + name + ".txt";
}

void ExpectGolden(const std::string& name,
                  const absl::StatusOr<Program>& program) {
  ASSERT_TRUE(program.ok()) << program.status();
  std::string text = program->to_string();
  std::string path = GoldenPath(name);
  const char* update = std::getenv("TESSEL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good())
      << "missing golden file " << path
      << " (set TESSEL_SOURCE_DIR; TESSEL_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "golden " << path << " differs; actual:\n"
                              << text;
}

TEST(SeedGoldenTest, TiledGemm) {
  ExpectGolden("tiled_gemm", seed::TiledGemm(1024, 1024, 512));
}

TEST(SeedGoldenTest, TiledGemmDynamicM) {
  ExpectGolden("tiled_gemm_dynamic_m", seed::TiledGemmDynamicM(1024, 512));
}

TEST(SeedGoldenTest, SplitKGemm) {
  ExpectGolden("split_k_gemm", seed::SplitKGemm(512, 512, 4096, 4));
}

TEST(SeedGoldenTest, MbarrierPipelinedGemm) {
  ExpectGolden("mbarrier_pipelined_gemm",
               seed::MbarrierPipelinedGemm(512, 512, 512));
}

TEST(SeedGoldenTest, LinearAttentionForward) {
  ExpectGolden("linear_attention_fwd",
               seed::LinearAttentionForward(2, 512, 4, 128, 128));
}

TEST(SeedGoldenTest, LinearAttentionBackward) {
  ExpectGolden("linear_attention_bwd",
               seed::LinearAttentionBackward(2, 512, 4, 128, 128));
}

TEST(SeedGoldenTest, RowSoftmaxCumsum) {
  ExpectGolden("row_softmax_cumsum", seed::RowSoftmaxCumsum(100, 64));
}

}  // namespace
}  // namespace tessel
