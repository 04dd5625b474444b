// The ping-pong schedule (PassConfig::pingpong_consumers), without a GPU:
// which kernels take it, the IR warp_specialize makes (two consumer groups
// taking alternate tiles, their mainloops ordered by a pair of mbarriers),
// and the GEMM sample's ping-pong tile compiled by NVRTC for sm_90a at tile
// multiples and ragged sizes, f16 NN and bf16 NT.
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

constexpr PassConfig kPingpong{.pingpong_consumers = true};

const ir::WarpSpecializeNode* Specialized(const LoweringState& st) {
  const ir::WarpSpecializeNode* found = nullptr;
  passes::ForEachStmt(st.program.body, [&](const ir::Stmt& s) {
    if (const auto* w = s.As<ir::WarpSpecializeNode>()) found = w;
  });
  return found;
}

// One consumer warpgroup (128 threads, 64x64 tiles over 4 warps).
ir::Program OneWarpgroupGemm() {
  return testing::Gemm(testing::WgmmaGemm(/*transpose_b=*/false));
}

TEST(Pingpong, TwoGroupsTakeAlternateTiles) {
  LoweringState st =
      RunPasses(OneWarpgroupGemm(), "warp_specialize", kPingpong);
  const ir::WarpSpecializeNode* w = Specialized(st);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->consumer_groups, 2);
  ASSERT_TRUE(w->group.defined());
  EXPECT_EQ(st.consumer_groups, 2);
  EXPECT_TRUE(st.persistent);
  // The ring's two barriers and the mainloops' order pair.
  EXPECT_EQ(st.tma_barriers.size(), 3u);
  const std::string text = ir::ToString(st.program);
  EXPECT_TRUE(absl::StrContains(text, "consumer_groups=2) as group:")) << text;
  EXPECT_TRUE(absl::StrContains(text, "math_order = T.alloc_barrier(2)"));
  EXPECT_TRUE(
      absl::StrContains(text, "T.mbarrier_init(math_order, [128, 128])"));
  // Group g's tile t = 2 * turn + g, stages counted on the block's tiles.
  EXPECT_TRUE(absl::StrContains(text, "tile, turn * 2 + group")) << text;
  EXPECT_TRUE(absl::StrContains(
      text,
      "T.mbarrier_wait_parity(math_order[group], (turn + 1 - group) % 2)"))
      << text;
  EXPECT_TRUE(
      absl::StrContains(text, "T.mbarrier_arrive(math_order[1 - group])"))
      << text;
}

// The default, and kernels it does not fit, keep one group.
TEST(Pingpong, OffByDefaultAndWhereItDoesNotFit) {
  EXPECT_EQ(Specialized(RunPasses(OneWarpgroupGemm(), "warp_specialize"))
                ->consumer_groups,
            1);
  // Two warpgroups split one tile already.
  LoweringState two =
      RunPasses(testing::Gemm(testing::WgmmaTwoWarpgroupsGemm()),
                "warp_specialize", kPingpong);
  ASSERT_NE(Specialized(two), nullptr);
  EXPECT_EQ(Specialized(two)->consumer_groups, 1);
  EXPECT_EQ(two.consumer_groups, 1);
  // Without a persistent grid there is one tile per block.
  PassConfig c = kPingpong;
  c.disable_persistent_grid = true;
  LoweringState plain = RunPasses(OneWarpgroupGemm(), "warp_specialize", c);
  ASSERT_NE(Specialized(plain), nullptr);
  EXPECT_EQ(Specialized(plain)->consumer_groups, 1);
}

// A gemm whose epilogue stages C through shared memory (`shared_epilogue`):
// one buffer the two groups would share; else stores from registers.
ir::Program EpilogueGemm(bool shared_epilogue) {
  namespace T = tessel;
  T::ProgramBuilder p("shared_epilogue_gemm");
  auto A = p.tensor("A", {1024, 256}, f16);
  auto B = p.tensor("B", {256, 1024}, f16);
  auto C = p.tensor("C", {1024, 1024}, f16);
  {
    T::Kernel kernel(8, 8, {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({128, 64}, f16, "A_shared");
    auto Bs = T::alloc_shared({64, 128}, f16, "B_shared");
    auto acc = T::alloc_fragment({128, 128}, f32, "acc");
    T::clear(acc);
    for (auto k : T::Pipelined(4, {.num_stages = 3})) {
      T::copy(A(by * 128, k * 64), As);
      T::copy(B(k * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
    if (shared_epilogue) {
      auto Cs = T::alloc_shared({128, 128}, f16, "C_shared");
      T::copy(acc, Cs);
      T::copy(Cs, C(by * 128, bx * 128));
    } else {
      T::copy(acc, C(by * 128, bx * 128));
    }
  }
  absl::StatusOr<T::Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return program->ir();
}

TEST(Pingpong, SharedBuffersBesidesTheRingKeepOneGroup) {
  LoweringState st =
      RunPasses(EpilogueGemm(true), "warp_specialize", kPingpong);
  ASSERT_NE(Specialized(st), nullptr);
  EXPECT_EQ(Specialized(st)->consumer_groups, 1);
  EXPECT_EQ(st.consumer_groups, 1);
  st = RunPasses(EpilogueGemm(false), "warp_specialize", kPingpong);
  ASSERT_NE(Specialized(st), nullptr);
  EXPECT_EQ(Specialized(st)->consumer_groups, 2);
}

// The lowered kernel: 384 threads, registers 40 / 232, each group's own
// thread index and named barrier.
TEST(Pingpong, LoweredKernel) {
  absl::StatusOr<CompiledKernel> k =
      compile(OneWarpgroupGemm(),
              {.target = Target::sm90a(), .pass_config = kPingpong});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  EXPECT_TRUE(absl::StrContains(src, "__launch_bounds__(384, 1)")) << src;
  EXPECT_TRUE(absl::StrContains(src, "tl::setmaxnreg_inc<232>")) << src;
  EXPECT_TRUE(absl::StrContains(src, "group_tx = (tx % 128)")) << src;
  EXPECT_EQ(Count(src, "pingpong_consumers=1"), 1);
  // The other group may start once this one's last wgmma is issued.
  const size_t arrive =
      src.find("tl::mbarrier_arrive(&math_order[(1 - group)]);");
  ASSERT_NE(arrive, std::string::npos) << src;
  EXPECT_LT(arrive, src.find("tl::wgmma_wait<0>();"));
  EXPECT_GT(arrive, src.find("tl::wgmma_wait<1>();"));
}

samples::GemmConfig PingpongConfig(int m, int n, int k, DataType dtype,
                                   samples::GemmLayout layout) {
  return {.M = m,
          .N = n,
          .K = k,
          .in_dtype = dtype,
          .out_dtype = dtype,
          .layout = layout,
          .tile = samples::PingpongGemmTile(90, dtype)};
}

// The sample's ping-pong tile: 128x128x64 per warpgroup, two m64n128k16
// per k16 step, compiled by NVRTC.
TEST(Pingpong, SampleTileCompilesForSm90a) {
  struct Size {
    int m, n, k;
  };
  for (Size s :
       {Size{4096, 4096, 1024}, Size{1000, 1000, 1000}, Size{200, 136, 88}}) {
    // f16 NN, bf16 NT (NVRTC takes ~1.4 s a kernel).
    for (DataType dtype : {DataType::kF16, DataType::kBF16}) {
      {
        const samples::GemmLayout layout = dtype == DataType::kF16
                                               ? samples::GemmLayout::kNN
                                               : samples::GemmLayout::kNT;
        const std::string type = dtype == DataType::kBF16 ? "bf16" : "f16";
        SCOPED_TRACE(
            absl::StrCat(s.m, "x", s.n, "x", s.k, " ", type, " ",
                         std::string(samples::GemmLayoutName(layout))));
        samples::GemmConfig c = PingpongConfig(s.m, s.n, s.k, dtype, layout);
        absl::StatusOr<Program> p = samples::GemmProgram(c);
        ASSERT_TRUE(p.ok()) << p.status();
        absl::StatusOr<CompiledKernel> k =
            compile(*p, {.target = Target::sm90a(), .pass_config = kPingpong});
        ASSERT_TRUE(k.ok()) << k.status();
        const std::string& src = k->source();
        EXPECT_EQ(Count(src, absl::StrCat("wgmma.mma_async.sync.aligned."
                                          "m64n128k16.f32.",
                                          type, ".", type)),
                  8);  // 4 k16 steps x 2 m64 blocks
        EXPECT_TRUE(absl::StrContains(src, "__launch_bounds__(384, 1)"));
        bool said = false;
        for (const std::string& line : k->schedule())
          said |= absl::StartsWith(line, "ping-pong: 2 consumer groups");
        EXPECT_TRUE(said);
      }
    }
  }
}

}  // namespace
}  // namespace tessel
