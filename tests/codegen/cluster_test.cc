// Cluster pairs (PassConfig::cluster_size 2), without a GPU: which grid
// dimension pairs and which copy is multicast, the lowered kernel (the
// peers' barriers set up before use, half boxes multicast to both blocks,
// stage releases in both blocks, the producer's drain), where it does not
// apply, and NVRTC compiles of the GEMM sample's tile in a pair.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "samples/gemm.h"
#include "src/ir/printer.h"
#include "tessel/compile.h"
#include "tests/common/count.h"
#include "tests/passes/run_passes.h"

namespace tessel {
namespace {

using passes::LoweringState;
using passes::RunPasses;
using testing::Count;

constexpr PassConfig kPair{.cluster_size = 2};

ir::Program SampleGemm(int m, int n, int k, samples::GemmLayout layout) {
  const samples::GemmConfig c{.M = m,
                              .N = n,
                              .K = k,
                              .layout = layout,
                              .tile = samples::DefaultGemmTile(90, f16)};
  absl::StatusOr<Program> p = samples::GemmProgram(c);
  EXPECT_TRUE(p.ok()) << p.status();
  return p->ir();
}

bool Said(const CompiledKernel& k, absl::string_view prefix) {
  for (const std::string& line : k.schedule())
    if (absl::StartsWith(line, prefix)) return true;
  return false;
}

// 128x256 tiles, M in 8 tiles: pairs along by share B's tile.
TEST(Cluster, PairsAlongMShareB) {
  LoweringState st = RunPasses(
      SampleGemm(1000, 1000, 1000, samples::GemmLayout::kNN), "", kPair);
  EXPECT_EQ(st.cluster_size, 2);
  ASSERT_TRUE(st.cluster_var.defined());
  EXPECT_EQ(st.cluster_var->name, "by");
  // B's four 64x64 boxes load as 32-row halves: a tensor map of its own.
  bool half_b = false;
  for (const passes::TensorMapParam& m : st.tensor_maps)
    half_b |= m.name == "B_tma" && m.box == std::vector<int64_t>{32, 64};
  EXPECT_TRUE(half_b);
}

// M in 9 tiles, N in 4: pairs along bx share A's tile.
TEST(Cluster, AnOddTileCountPairsTheOtherWay) {
  LoweringState st = RunPasses(
      SampleGemm(1100, 1000, 512, samples::GemmLayout::kNT), "", kPair);
  EXPECT_EQ(st.cluster_size, 2);
  ASSERT_TRUE(st.cluster_var.defined());
  EXPECT_EQ(st.cluster_var->name, "bx");
}

TEST(Cluster, LoweredKernel) {
  absl::StatusOr<CompiledKernel> k =
      compile(SampleGemm(1000, 1000, 1000, samples::GemmLayout::kNN),
              {.target = Target::sm90a(), .pass_config = kPair});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  // The peer's barriers are initialized (and fenced) before any block of
  // the pair goes on.
  const size_t sync = src.find("tl::cluster_sync();");
  ASSERT_NE(sync, std::string::npos) << src;
  EXPECT_GT(sync, src.find("tl::fence_barrier_init();"));
  EXPECT_LT(sync, src.find("setmaxnreg"));
  // Two arrivals per consumer warp of both blocks: 2 x 8.
  EXPECT_TRUE(absl::StrContains(src, "tl::mbarrier_init(&tma_empty[0], 16);"))
      << src;
  EXPECT_EQ(Count(src, "tl::mbarrier_arrive_pair(&tma_empty["), 2) << src;
  // B's 4 boxes, each half multicast; A's box loaded alone.
  EXPECT_EQ(Count(src, "tl::tma_load_multicast("), 4) << src;
  EXPECT_EQ(Count(src, "tl::tma_load("), 1) << src;
  EXPECT_TRUE(absl::StrContains(src, "cluster_size=2"));
  EXPECT_TRUE(Said(*k, "clusters of 2 blocks")) << k->schedule().size();
}

// Where it does not apply the kernel is the one without clusters, and
// says why.
TEST(Cluster, WhereItDoesNotApply) {
  // Both tile counts odd (9 x 5).
  const ir::Program odd = SampleGemm(1100, 1200, 512, samples::GemmLayout::kNN);
  absl::StatusOr<CompiledKernel> with =
      compile(odd, {.target = Target::sm90a(), .pass_config = kPair});
  absl::StatusOr<CompiledKernel> without =
      compile(odd, {.target = Target::sm90a()});
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_FALSE(absl::StrContains(with->source(), "cluster_sync"));
  EXPECT_TRUE(Said(*with, "clusters: none"));
  // The cp.async path and sm_80 (its own tile) have none.
  absl::StatusOr<CompiledKernel> cp_async =
      compile(SampleGemm(1000, 1000, 1000, samples::GemmLayout::kNN),
              {.target = Target::sm90a(),
               .pass_config = {.disable_tma_lower = true, .cluster_size = 2}});
  ASSERT_TRUE(cp_async.ok()) << cp_async.status();
  EXPECT_FALSE(absl::StrContains(cp_async->source(), "cluster_sync"));
  absl::StatusOr<Program> sm80 =
      samples::GemmProgram({.M = 1000,
                            .N = 1000,
                            .K = 1000,
                            .tile = samples::DefaultGemmTile(80, f16)});
  ASSERT_TRUE(sm80.ok()) << sm80.status();
  absl::StatusOr<CompiledKernel> k = compile(
      *sm80, {.target = Target::sm80(), .pass_config = {.cluster_size = 2}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_FALSE(absl::StrContains(k->source(), "cluster_sync"));
}

TEST(Cluster, SizesOtherThanOneOrTwoAreRefused) {
  absl::StatusOr<CompiledKernel> k =
      compile(SampleGemm(1000, 1000, 1000, samples::GemmLayout::kNN),
              {.target = Target::sm90a(), .pass_config = {.cluster_size = 4}});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(k.status().message(), "cluster_size is 4"))
      << k.status();
}

// NVRTC compiles the pair at tile multiples and ragged sizes, both layouts,
// pairs along either dimension.
TEST(Cluster, SampleTileCompilesForSm90a) {
  struct Case {
    int m, n, k;
    samples::GemmLayout layout;
  };
  for (Case c : {Case{4096, 4096, 4096, samples::GemmLayout::kNN},
                 Case{1000, 1000, 1000, samples::GemmLayout::kNT},
                 Case{1100, 1000, 520, samples::GemmLayout::kNN}}) {
    SCOPED_TRACE(absl::StrCat(c.m, "x", c.n, "x", c.k));
    absl::StatusOr<CompiledKernel> k =
        compile(SampleGemm(c.m, c.n, c.k, c.layout),
                {.target = Target::sm90a(), .pass_config = kPair});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(absl::StrContains(k->source(), "tl::tma_load_multicast("));
  }
}

}  // namespace
}  // namespace tessel
