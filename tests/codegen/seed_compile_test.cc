// Every seed program (built with the DSL) goes through the scheduler, the
// codegen and NVRTC for sm_80 and sm_90a, without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/runtime/lower.h"
#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"

namespace tessel {
namespace {

struct Seed {
  const char* name;
  absl::StatusOr<Program> (*make)();
};

const Seed kSeeds[] = {
    {"tiled_gemm", [] { return seed::TiledGemm(512, 512, 256); }},
    {"tiled_gemm_odd", [] { return seed::TiledGemm(333, 264, 200); }},
    {"tiled_gemm_dynamic_m", [] { return seed::TiledGemmDynamicM(256, 128); }},
    {"split_k_gemm", [] { return seed::SplitKGemm(256, 256, 1024, 4); }},
    {"mbarrier_gemm",
     [] { return seed::MbarrierPipelinedGemm(256, 256, 256); }},
    {"linear_attention_fwd",
     [] { return seed::LinearAttentionForward(2, 256, 2, 64, 64); }},
    {"linear_attention_bwd",
     [] { return seed::LinearAttentionBackward(2, 256, 2, 64, 64); }},
    {"row_softmax_cumsum", [] { return seed::RowSoftmaxCumsum(128, 64); }},
};

class SeedCompile
    : public ::testing::TestWithParam<std::tuple<Seed, const char*>> {};

TEST_P(SeedCompile, CompilesWithNvrtc) {
  auto [s, arch] = GetParam();
  absl::StatusOr<Program> p = s.make();
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = Target::cuda(arch)});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_GT(k->cubin_bytes(), 0u);
}

// A kernel with 32 or more loop nests around mma.sync / ldmatrix, none of
// more than 16 fragments, has them printed out: one { } scope per
// iteration, the fragment offsets constants (NVVM unrolls hundreds of small
// nests slowly). A kernel with a bigger nest (the tiled gemm's warp tile)
// keeps its loops. Both compile: SeedCompile.
TEST(SeedCodegen, ManySmallFragmentNestsArePrintedUnrolled) {
  absl::StatusOr<Program> bwd =
      seed::LinearAttentionBackward(2, 256, 2, 64, 64);
  ASSERT_TRUE(bwd.ok()) << bwd.status();
  absl::StatusOr<CompiledKernel> k = compile(*bwd, {.target = Target::sm80()});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& s = k->source();
  EXPECT_THAT(s, ::testing::HasSubstr("{  // mi"));
  const std::string mma = "tl::mma_m16n8k16_f16_f32((*reinterpret_cast<";
  size_t mmas = 0;
  for (size_t p = s.find(mma); p != std::string::npos;
       p = s.find(mma, p + 1), ++mmas) {
    // float(*)[4]>(&acc[12])): a constant offset, no loop variable.
    const size_t open = s.find("[", s.find(">(&", p));
    const size_t close = s.find("]", open);
    EXPECT_EQ(
        s.substr(open + 1, close - open - 1).find_first_not_of("0123456789"),
        std::string::npos)
        << s.substr(p, 120);
  }
  EXPECT_GT(mmas, 32u);
  EXPECT_EQ(s.find("#pragma unroll\n  for (int mi"), std::string::npos);

  absl::StatusOr<Program> gemm = seed::TiledGemm(512, 512, 256);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  k = compile(*gemm, {.target = Target::sm80()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), ::testing::HasSubstr("#pragma unroll"));
  EXPECT_THAT(k->source(), ::testing::Not(::testing::HasSubstr("{  // ")));
}

// The source (the cache key) must not depend on where the IR nodes happen to
// live in memory: lowering the same program again, with fresh nodes, gives
// the same text. (Buffers sharing a shared-memory offset were once named in
// pointer-hash order, so every process missed the warmed cache.)
TEST(SeedLowering, SourceIsTheSameEveryTime) {
  // Blocks of varied sizes kept alive between lowerings, so that the IR
  // nodes land at different addresses each time.
  std::vector<std::unique_ptr<char[]>> shift;
  for (const Seed& s : kSeeds) {
    std::string first;
    for (int i = 0; i < 24; ++i) {
      shift.push_back(std::make_unique<char[]>(48 * (1 + (i * 7919) % 61)));
      absl::StatusOr<Program> p = s.make();
      ASSERT_TRUE(p.ok()) << p.status();
      absl::StatusOr<runtime::Lowered> l =
          runtime::Lower(p->ir(), {.target = Target::sm90a()});
      ASSERT_TRUE(l.ok()) << s.name << ": " << l.status();
      if (i == 0) {
        first = l->generated.source.text;
      } else {
        ASSERT_TRUE(l->generated.source.text == first)
            << s.name << ": lowering " << i << " gave another source";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedCompile,
                         ::testing::Combine(::testing::ValuesIn(kSeeds),
                                            ::testing::Values("sm_80",
                                                              "sm_90a")),
                         [](const auto& info) {
                           std::string arch = std::get<1>(info.param);
                           return std::string(std::get<0>(info.param).name) +
                                  "_" + (arch == "sm_80" ? "sm80" : "sm90a");
                         });

}  // namespace
}  // namespace tessel
