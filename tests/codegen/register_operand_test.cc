// Gemms whose A operand is a register fragment (the flash-attention P V
// pattern): the layout inference gives the fragment the accumulator layout
// the mma reads it in, the lowering packs it into A registers instead of
// going through shared memory, NVRTC compiles it for sm_80 and sm_90a, and
// warp partitions that do not fit are a clear error at the user's gemm.
// The GPU numerics are tessel_seed_gpu_test's ChainedGemm* cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/passes/pass_list.h"
#include "tessel/compile.h"
#include "tests/codegen/chained_gemm.h"

namespace tessel {
namespace {

using testing::ChainedGemm;
using testing::ChainedGemmShape;
using ::testing::HasSubstr;
using ::testing::Not;

const passes::FragmentLayout* LayoutOf(const passes::LoweringState& st,
                                       const std::string& name) {
  for (const auto& [node, layout] : st.layouts)
    if (node->name == name) return &layout;
  return nullptr;
}

TEST(RegisterOperand, TakesTheAccumulatorLayoutOfItsSource) {
  absl::StatusOr<Program> p = ChainedGemm({});
  ASSERT_TRUE(p.ok()) << p.status();
  passes::LoweringState st;
  st.program = p->ir();
  st.target = Target::sm90a();
  ASSERT_TRUE(passes::RunPasses(st, "layout_inference").ok());
  const passes::FragmentLayout* pl = LayoutOf(st, "P");
  const passes::FragmentLayout* sl = LayoutOf(st, "acc_s");
  const passes::FragmentLayout* ol = LayoutOf(st, "acc_o");
  ASSERT_NE(pl, nullptr);
  ASSERT_NE(sl, nullptr);
  ASSERT_NE(ol, nullptr);
  EXPECT_EQ(pl->ToString(), "mma[64, 64] warps 4x1 local [1][8][4]");
  EXPECT_TRUE(*pl == *sl);
  EXPECT_EQ(ol->ToString(), "mma[64, 64] warps 4x1 local [1][8][4]");
}

TEST(RegisterOperand, CompilesWithoutSharedMemoryForP) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<Program> regs = ChainedGemm({});
    absl::StatusOr<Program> shared = ChainedGemm({.p_in_registers = false});
    ASSERT_TRUE(regs.ok() && shared.ok());
    absl::StatusOr<CompiledKernel> kr =
        compile(*regs, {.target = Target::cuda(arch)});
    absl::StatusOr<CompiledKernel> ks =
        compile(*shared, {.target = Target::cuda(arch)});
    ASSERT_TRUE(kr.ok()) << kr.status();
    ASSERT_TRUE(ks.ok()) << ks.status();
    // P has no shared tile (its address variable) in the register form.
    EXPECT_THAT(kr->source(), Not(HasSubstr("P_addr")));
    EXPECT_THAT(ks->source(), HasSubstr("P_addr"));
    EXPECT_THAT(kr->source(), HasSubstr("tl::pack_b16x2("));
    EXPECT_THAT(ks->source(), Not(HasSubstr("tl::pack_b16x2(")));
    if (std::string(arch) == "sm_90a") {
      // wgmma: the tensor cores read shared operands themselves.
      EXPECT_THAT(kr->source(), Not(HasSubstr("ldmatrix")));
      continue;
    }
    // Only B's fragments come through ldmatrix in the second gemm: the
    // first gemm loads A and B (1 + 4 / 2 per k16 step), the second B only.
    auto count = [](const std::string& s, const std::string& what) {
      int n = 0;
      for (size_t at = s.find(what); at != std::string::npos;
           at = s.find(what, at + 1))
        ++n;
      return n;
    };
    EXPECT_LT(count(kr->source(), "tl::ldmatrix_x4("),
              count(ks->source(), "tl::ldmatrix_x4("));
  }
}

TEST(RegisterOperand, SeveralRowTilesPerWarpCompile) {
  absl::StatusOr<Program> p = ChainedGemm(
      {.M = 256, .N = 32, .D = 128, .block_m = 128, .threads = 128});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
}

// Two m64 blocks per warpgroup in both gemms: P keeps wgmma's rows
// (FragmentLayout::Wgmma) from S to the second gemm's A registers.
TEST(RegisterOperand, WgmmaRowTilesFeedTheSecondGemm) {
  absl::StatusOr<Program> p =
      ChainedGemm({.M = 256, .block_m = 128, .threads = 128});
  ASSERT_TRUE(p.ok()) << p.status();
  passes::LoweringState st;
  st.program = p->ir();
  st.target = Target::sm90a();
  ASSERT_TRUE(passes::RunPasses(st, "layout_inference").ok());
  EXPECT_EQ(LayoutOf(st, "P")->ToString(),
            "wgmma[128, 64] warps 4x1 local [2][8][4]");
  EXPECT_EQ(LayoutOf(st, "acc_o")->ToString(),
            "wgmma[128, 64] warps 4x1 local [2][8][4]");
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("wgmma.mma_async"));
  EXPECT_THAT(k->source(), Not(HasSubstr("tl::mma_m16n8k16_")));
}

// The first gemm cannot take wgmma (B rows of 64 bytes), so P is in the
// mma.sync rows: the second gemm, which would fit wgmma, stays on
// mma.sync to read it (it failed to lower before).
TEST(RegisterOperand, GemmFedByAnMmaSyncGemmStaysOnMmaSync) {
  absl::StatusOr<Program> p =
      ChainedGemm({.M = 256, .N = 32, .D = 64, .block_m = 128, .threads = 128});
  ASSERT_TRUE(p.ok()) << p.status();
  passes::LoweringState st;
  st.program = p->ir();
  st.target = Target::sm90a();
  ASSERT_TRUE(passes::RunPasses(st, "layout_inference").ok());
  EXPECT_EQ(LayoutOf(st, "P")->ToString(),
            "mma[128, 32] warps 4x1 local [2][4][4]");
  EXPECT_EQ(LayoutOf(st, "acc_o")->ToString(),
            "mma[128, 64] warps 4x1 local [2][8][4]");
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), Not(HasSubstr("wgmma.mma_async")));
}

// The mma.sync path keeps the square policy's 2x2 grid (wgmma would turn
// the gemm to whole rows per warp: WgmmaChainCompiles below).
CompileOptions MmaSync() {
  return {.target = Target::sm90a(), .pass_config = {.disable_wgmma = true}};
}

TEST(RegisterOperand, SourceWithOtherWarpRowsIsAnErrorAtTheGemm) {
  // S is 2x2 over the warps (square policy): its copy P cannot feed a gemm
  // whose warps each own 16 whole rows.
  absl::StatusOr<Program> p = ChainedGemm({.first = GemmWarpPolicy::kSquare});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, MmaSync());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
  std::string msg(k.status().message());
  EXPECT_THAT(msg, HasSubstr("chained_gemm.cc:"));
  // In the user's words: the warp grids and the policy to give, no layout.
  EXPECT_THAT(msg, HasSubstr("A operand P is a register fragment spread over "
                             "the threads as a gemm accumulator on a 2x2 "
                             "warp grid"));
  EXPECT_THAT(msg, HasSubstr("(a 4x1 warp grid)"));
  EXPECT_THAT(msg, HasSubstr("GemmWarpPolicy::kFullRow"));
  EXPECT_THAT(msg, Not(HasSubstr("mma[")));
}

TEST(RegisterOperand, GemmWithoutWholeRowsPerWarpIsAnError) {
  absl::StatusOr<Program> p = ChainedGemm({.second = GemmWarpPolicy::kFullCol});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, MmaSync());
  ASSERT_FALSE(k.ok());
  std::string msg(k.status().message());
  EXPECT_THAT(msg, HasSubstr("chained_gemm.cc:"));
  EXPECT_THAT(msg, HasSubstr("warp grid is 1x4"));
  EXPECT_THAT(msg, HasSubstr("kFullRow"));
}

// The default policy gives a register A operand whole rows per warp (it
// was refused on mma.sync with the square 2x2 grid; sm_90a took it).
TEST(RegisterOperand, DefaultPolicyGivesWholeRowsPerWarp) {
  absl::StatusOr<Program> p = ChainedGemm({.second = GemmWarpPolicy::kSquare});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, MmaSync());
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("tl::mma_m16n8k16_f16_f32("));
  EXPECT_THAT(k->source(), HasSubstr("tl::pack_b16x2(P["));  // A in place
}

// On sm_90a the square-policy gemms of the chain take wgmma, whose warps
// own whole rows: the chain compiles, reading P from registers.
TEST(RegisterOperand, WgmmaChainCompiles) {
  absl::StatusOr<Program> p = ChainedGemm(
      {.first = GemmWarpPolicy::kSquare, .second = GemmWarpPolicy::kSquare});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("wgmma.mma_async"));
  EXPECT_THAT(k->source(), HasSubstr("tl::pack_b16x2("));
}

TEST(RegisterOperand, OperandOffTheMmaPathIsAnError) {
  // K = 24 for the second gemm: not a whole k16 step, so no mma.sync path
  // (and no FMA path reads registers of other threads).
  absl::StatusOr<Program> p = ChainedGemm({.N = 24});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_FALSE(k.ok());
  std::string msg(k.status().message());
  EXPECT_THAT(msg, HasSubstr("chained_gemm.cc:"));
  EXPECT_THAT(msg, HasSubstr("register operands need the mma.sync path"));
  EXPECT_THAT(msg, HasSubstr("here K = 24 is not a multiple of 16"));
}

}  // namespace
}  // namespace tessel
