// TMA-store epilogues (PassConfig::disable_tma_store_epilogue), without a GPU:
// which epilogue copies take them (and which keep the plain stores), the
// staging tile warp_specialize allocates and the shared memory plan gives
// its own bytes, the lowered stores, barriers and TMA stores, and the GEMM
// sample's tiles compiled by NVRTC for sm_90a (f16 / bf16, NN / NT, tile
// multiples, ragged sizes, the bias + ReLU epilogue).
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "samples/gemm.h"
#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"
#include "tests/common/count.h"
#include "tests/passes/run_passes.h"

namespace tessel {
namespace {

using passes::LoweringState;
using passes::RunPasses;
using testing::Count;

constexpr PassConfig kTmaStore{};  // the default: TMA-store epilogues

samples::GemmConfig Config(int m, int n, int k, DataType dtype,
                           samples::GemmLayout layout) {
  return {.M = m,
          .N = n,
          .K = k,
          .in_dtype = dtype,
          .out_dtype = dtype,
          .layout = layout,
          .tile = samples::DefaultGemmTile(90, dtype)};
}

absl::StatusOr<CompiledKernel> Compile(const samples::GemmConfig& c,
                                       const PassConfig& config) {
  absl::StatusOr<Program> p = samples::GemmProgram(c);
  if (!p.ok()) return p.status();
  return compile(*p, {.target = Target::sm90a(), .pass_config = config});
}

// The default tile (128x256x64, 4 stages of 48 KB): two warpgroups of 64
// rows, four 64-column chunks each, two 8 KB buffers per warpgroup.
TEST(TmaStoreEpilogue, StagesTheDefaultTile) {
  absl::StatusOr<Program> p = samples::GemmProgram(
      Config(4096, 4096, 4096, f16, samples::GemmLayout::kNN));
  ASSERT_TRUE(p.ok()) << p.status();
  LoweringState st = RunPasses(p->ir(), "plan_shared_memory", kTmaStore);
  ASSERT_EQ(st.epilogue_stores.size(), 1u);
  const passes::EpilogueStore& e = st.epilogue_stores[0];
  EXPECT_EQ(e.buffers, 2);
  const std::string text = ir::ToString(st.program);
  EXPECT_TRUE(
      absl::StrContains(text,
                        "C_local_stage = T.alloc_shared((2, 2, 64, 64), f16, "
                        "layout=T.swizzled(128))"))
      << text;
  // Its own bytes, beside the stages the producer fills meanwhile.
  const int64_t off = st.smem.offset.at(e.stage.get());
  EXPECT_EQ(st.smem.bytes.at(e.stage.get()), 32768);
  EXPECT_EQ(off % 1024, 0);
  for (const auto& [b, o] : st.smem.offset) {
    if (b == e.stage.get()) continue;
    EXPECT_FALSE(st.smem.MayAlias(b, e.stage.get())) << b->name;
  }
  EXPECT_LE(st.smem.total_bytes, Target::sm90a().max_shared_bytes());
  // Switched off: no staging.
  EXPECT_TRUE(RunPasses(p->ir(), "plan_shared_memory",
                        PassConfig{.disable_tma_store_epilogue = true})
                  .epilogue_stores.empty());
}

// The 256x128 tile (4 stages of 48 KB, warpgroups of 128 rows): two
// buffers would not fit, one per warpgroup does; each chunk then waits for
// the last store's reads and meets twice.
TEST(TmaStoreEpilogue, TallTileTakesOneBuffer) {
  samples::GemmConfig c =
      Config(3000, 5000, 4000, f16, samples::GemmLayout::kNT);
  c.tile = {.block_m = 256, .block_n = 128, .num_stages = 4};
  absl::StatusOr<Program> p = samples::GemmProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  LoweringState st = RunPasses(p->ir(), "plan_shared_memory", kTmaStore);
  ASSERT_EQ(st.epilogue_stores.size(), 1u);
  EXPECT_EQ(st.epilogue_stores[0].buffers, 1);
  EXPECT_EQ(st.smem.bytes.at(st.epilogue_stores[0].stage.get()), 32768);
  EXPECT_LE(st.smem.total_bytes, Target::sm90a().max_shared_bytes());
  absl::StatusOr<CompiledKernel> k = Compile(c, kTmaStore);
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  EXPECT_EQ(Count(src, "tl::tma_store(&C_tma, "), 2) << src;
  EXPECT_EQ(Count(src, "tl::tma_store_wait_read<0>();"), 2);
  EXPECT_EQ(Count(src, "tl::named_barrier_sync(((tx / 128) + 2), 128);"), 4);
  // The wait comes before the chunk's pair stores.
  EXPECT_LT(src.find("tl::tma_store_wait_read<0>();"),
            src.find("C_local_stage[("));
}

TEST(TmaStoreEpilogue, LoweredCode) {
  absl::StatusOr<CompiledKernel> k = Compile(
      Config(4096, 4096, 4096, f16, samples::GemmLayout::kNN), kTmaStore);
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  EXPECT_EQ(Count(src, "tma_store_epilogue=0"), 0);
  EXPECT_TRUE(
      absl::StrContains(src, "const __grid_constant__ tl::TmaDescriptor C_tma"))
      << src;
  // Four chunks: a store, a commit, a barrier and a read wait each.
  EXPECT_EQ(Count(src, "tl::tma_store(&C_tma, "), 4) << src;
  EXPECT_EQ(Count(src, "tl::tma_store_commit();"), 4);
  EXPECT_EQ(Count(src, "tl::tma_store_wait_read<0>();"), 4);
  EXPECT_EQ(Count(src, "tl::named_barrier_sync(((tx / 128) + 2), 128);"), 4);
  // The async-proxy fence before each, and the last stores waited for once.
  EXPECT_EQ(Count(src, "tl::tma_store_wait<0>();"), 1);
  bool said = false;
  for (const std::string& line : k->schedule()) {
    said |= line ==
            "epilogue: C_local -> C through C_local_stage [2, 2, 64, 64] and "
            "TMA stores (2 buffers per warpgroup)";
  }
  EXPECT_TRUE(said);
  // No direct global stores of C are left.
  EXPECT_FALSE(absl::StrContains(src, "*reinterpret_cast<tl::u32*>(&C["))
      << src;
  const size_t fence =
      src.rfind("tl::fence_proxy_async();", src.find("tl::tma_store(&C_tma"));
  const size_t sync = src.rfind("tl::named_barrier_sync(((tx / 128) + 2)",
                                src.find("tl::tma_store(&C_tma"));
  ASSERT_NE(fence, std::string::npos);
  ASSERT_NE(sync, std::string::npos);
  EXPECT_LT(fence, sync);
}

// Where the TMA cannot store, the plain stores stay: rows of 4097 f16
// (not whole 16-byte chunks), f32 output, ping-pong consumers, the
// non-specialized pipeline, sm_80.
TEST(TmaStoreEpilogue, PlainStoresWhereTheTmaCannot) {
  // `said`: the schedule names the plain stores (warp-specialized kernels).
  auto plain = [](const samples::GemmConfig& c, PassConfig config,
                  Target target = Target::sm90a(), bool specialized = true) {
    absl::StatusOr<Program> p = samples::GemmProgram(c);
    EXPECT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CompiledKernel> k =
        compile(*p, {.target = target, .pass_config = config});
    EXPECT_TRUE(k.ok()) << k.status();
    if (!k.ok()) return;
    EXPECT_FALSE(absl::StrContains(k->source(), "tl::tma_store("));
    EXPECT_TRUE(absl::StrContains(k->source(), "C[")) << k->source();
    bool said = false;
    for (const std::string& line : k->schedule())
      said |= absl::StartsWith(line, "epilogue: plain stores");
    EXPECT_EQ(said, specialized);
  };
  plain(Config(4095, 4097, 4096, f16, samples::GemmLayout::kNT), kTmaStore);
  samples::GemmConfig f32_out =
      Config(1024, 1024, 256, f16, samples::GemmLayout::kNN);
  f32_out.out_dtype = f32;
  plain(f32_out, kTmaStore);
  samples::GemmConfig pingpong =
      Config(1024, 1024, 256, f16, samples::GemmLayout::kNN);
  pingpong.tile = samples::PingpongGemmTile(90, f16);
  PassConfig pp = kTmaStore;
  pp.pingpong_consumers = true;
  plain(pingpong, pp);
  PassConfig no_ws = kTmaStore;
  no_ws.disable_warp_specialized = true;
  plain(Config(1024, 1024, 256, f16, samples::GemmLayout::kNN), no_ws,
        Target::sm90a(), false);
  samples::GemmConfig sm80 =
      Config(1024, 1024, 256, f16, samples::GemmLayout::kNN);
  sm80.tile = samples::DefaultGemmTile(80, f16);
  plain(sm80, kTmaStore, Target::sm80(), false);
  // Switched off: plain stores where the TMA could store.
  plain(Config(1024, 1024, 256, f16, samples::GemmLayout::kNN),
        PassConfig{.disable_tma_store_epilogue = true}, Target::sm90a(), false);
}

// The sample's tiles compiled by NVRTC with TMA stores: the default
// 128x256 tile, the 256x128 and 128x128 ones of the table, ragged sizes,
// bf16 NT, the fused bias + ReLU.
TEST(TmaStoreEpilogue, SampleTilesCompileForSm90a) {
  struct Case {
    int m, n, k;
    DataType dtype;
    samples::GemmLayout layout;
    samples::GemmTile tile;
    bool bias_relu;
  };
  const samples::GemmTile wide = samples::DefaultGemmTile(90, f16);
  const samples::GemmTile tall{.block_m = 256, .block_n = 128, .num_stages = 4};
  const samples::GemmTile small{
      .block_m = 128, .block_n = 128, .num_stages = 6};
  for (const Case& c :
       {Case{333, 520, 200, f16, samples::GemmLayout::kNN, wide, false},
        Case{1000, 1000, 1000, bf16, samples::GemmLayout::kNT, small, false},
        Case{3000, 5000, 4000, f16, samples::GemmLayout::kNT, tall, false},
        Case{4096, 4096, 1024, f16, samples::GemmLayout::kNN, wide, true}}) {
    SCOPED_TRACE(absl::StrCat(c.m, "x", c.n, "x", c.k, " tile ", c.tile.block_m,
                              "x", c.tile.block_n));
    samples::GemmConfig g = Config(c.m, c.n, c.k, c.dtype, c.layout);
    g.tile = c.tile;
    g.bias_relu = c.bias_relu;
    absl::StatusOr<CompiledKernel> k = Compile(g, kTmaStore);
    ASSERT_TRUE(k.ok()) << k.status();
    const int chunks = c.tile.block_n / 64;
    EXPECT_EQ(Count(k->source(), "tl::tma_store(&C_tma, "), chunks)
        << k->source();
    EXPECT_TRUE(absl::StrContains(k->source(), "__launch_bounds__(384, 1)"));
  }
}

}  // namespace
}  // namespace tessel
