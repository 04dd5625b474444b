// The intrinsic table (every enumerator has its entry, names are unique and
// round-trip) and the passes that follow the tile-op lowering: the
// async-proxy fences only where wgmma reads shared memory, and the block
// rasterization of T.use_swizzle only after the lowering.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/ir/printer.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/pass_list.h"
#include "tessel/tessel.h"
#include "tests/codegen/test_programs.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

TEST(Intrinsics, TableCoversTheEnumInOrderWithUniqueNames) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(Intrinsic::kWgmmaDescAdd); ++i) {
    const auto id = static_cast<Intrinsic>(i);
    const IntrinsicInfo& info = InfoOf(id);
    EXPECT_EQ(info.id, id) << info.name;
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << info.name;
    for (int w : info.written) {
      EXPECT_TRUE(w < info.min_arity) << info.name;
    }
    EXPECT_TRUE(info.arity < 0 || info.min_arity <= info.arity) << info.name;
    ir::Stmt s = Intrin(id, std::vector<ir::Expr>(info.min_arity, 0));
    EXPECT_EQ(IntrinsicOf(*AsIntrin(s)), id) << info.name;
    EXPECT_NE(AsIntrin(s, id), nullptr) << info.name;
  }
}

TEST(Intrinsics, EffectsNameWhatThePlannersAskFor) {
  EXPECT_TRUE(
      HasEffect(Intrin(Intrinsic::kCpAsyncWait, {0}), kWaitsAsyncCopies));
  EXPECT_FALSE(
      HasEffect(Intrin(Intrinsic::kCpAsyncCommit, {}), kWaitsAsyncCopies));
  EXPECT_TRUE(HasEffect(Intrin(Intrinsic::kWgmma, {0, 0, 0, 0, 0, 0, 0, 0}),
                        kAsyncProxyReadsShared));
  EXPECT_FALSE(
      HasEffect(Intrin(Intrinsic::kMma, {0, 0, 0, 0}), kAsyncProxyReadsShared));
  EXPECT_FALSE(HasEffect(Intrin(Intrinsic::kMma, {0, 0, 0, 0}), kExpression));
  EXPECT_TRUE(InfoOf(Intrinsic::kThreadIdx).effects & kExpression);
}

LoweringState Lower(const ir::Program& p, Target target,
                    const std::string& stop = "", PassConfig config = {}) {
  return RunPasses(p, stop, config, target);
}

int Count(const ir::Stmt& body, Intrinsic id) {
  int n = 0;
  ForEachStmt(body,
              [&](const ir::Stmt& s) { n += AsIntrin(s, id) != nullptr; });
  return n;
}

int CountSyncs(const ir::Stmt& body) {
  int n = 0;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    n += s->kind == ir::StmtKind::kSyncThreads;
  });
  return n;
}

TEST(FenceAsyncProxy, BeforeEveryBarrierOfAWgmmaKernelOnly) {
  ir::Program wgmma = testing::Gemm(testing::WgmmaGemm(false));
  // The cp.async pipeline: its barriers are __syncthreads.
  const PassConfig cp_async{.disable_warp_specialized = true};
  LoweringState lowered =
      Lower(wgmma, Target::sm90a(), "lower_tile_ops", cp_async);
  EXPECT_EQ(Count(lowered.program.body, Intrinsic::kFenceProxyAsync), 0);
  LoweringState fenced = Lower(wgmma, Target::sm90a(), "", cp_async);
  EXPECT_GT(CountSyncs(fenced.program.body), 0);
  EXPECT_EQ(Count(fenced.program.body, Intrinsic::kFenceProxyAsync),
            CountSyncs(fenced.program.body));
  // The same gemm on sm_80 takes mma.sync: no async-proxy reads, no fences.
  LoweringState mma = Lower(wgmma, Target::sm80());
  EXPECT_EQ(Count(mma.program.body, Intrinsic::kFenceProxyAsync), 0);
}

TEST(RasterizeBlocks, RemapsTheBlockIndicesAfterTheLowering) {
  ir::Program p = testing::Gemm({.panel = 4});
  LoweringState lowered = Lower(p, Target::sm80(), "fence_proxy_async");
  std::string before = ir::ToString(lowered.program);
  EXPECT_NE(before.find("use_swizzle"), std::string::npos) << before;
  EXPECT_EQ(before.find("raw_bx"), std::string::npos) << before;
  LoweringState done = Lower(p, Target::sm80());
  std::string after = ir::ToString(done.program);
  EXPECT_EQ(after.find("use_swizzle"), std::string::npos) << after;
  EXPECT_NE(after.find("raw_bx"), std::string::npos) << after;
  // The thread index stays the kernel's first statement.
  EXPECT_LT(after.find("thread_idx"), after.find("block_linear")) << after;
}

TEST(GemmPlans, DecidedBeforeTheLoweringAndPrinted) {
  ir::Program p = testing::Gemm(testing::WgmmaGemm(false));
  LoweringState hopper = Lower(p, Target::sm90a(), "plan_gemms");
  ASSERT_EQ(hopper.gemm_plans.size(), 1u);
  const GemmPlan& w = hopper.gemm_plans[0].plan;
  EXPECT_EQ(w.instruction, GemmInstruction::kWgmma);
  EXPECT_EQ(w.b.path, OperandPath::kDescriptor);
  EXPECT_EQ(w.warps_m * w.warps_n, 4);
  EXPECT_EQ(hopper.GemmPlanOf(hopper.gemm_plans[0].gemm.As<ir::GemmNode>()),
            &w);
  std::string dump = DumpState(hopper);
  EXPECT_NE(dump.find("# gemm plans\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find(": " + w.ToString()), std::string::npos) << dump;
  EXPECT_NE(w.ToString().find("wgmma, warps 4x1"), std::string::npos)
      << w.ToString();

  LoweringState ampere = Lower(p, Target::sm80(), "plan_gemms");
  ASSERT_EQ(ampere.gemm_plans.size(), 1u);
  const GemmPlan& m = ampere.gemm_plans[0].plan;
  EXPECT_EQ(m.instruction, GemmInstruction::kMmaSync);
  EXPECT_EQ(m.a.path, OperandPath::kLdmatrix);
  EXPECT_EQ(m.b.path, OperandPath::kLdmatrix);
  EXPECT_EQ(m.k_steps, w.k_steps);
  // Before plan_gemms there is no plan.
  EXPECT_TRUE(Lower(p, Target::sm80(), "insert_barriers").gemm_plans.empty());
}

TEST(SharedPlan, PlansTheScratchOfReductionsBeforeTheLowering) {
  LoweringState st =
      Lower(testing::ReduceAndCumsum(), Target::sm80(), "plan_shared_memory");
  ASSERT_FALSE(st.smem.scratch.empty());
  for (const auto& [op, buffer] : st.smem.scratch) {
    EXPECT_EQ(st.smem.ScratchOf(op.get()).get(), buffer.get());
    EXPECT_EQ(st.smem.offset.at(buffer.get()), st.smem.scratch_offset);
    EXPECT_EQ(st.smem.bytes.at(buffer.get()), st.smem.scratch_bytes);
  }
  EXPECT_NE(DumpState(st).find("red_scratch: offset"), std::string::npos);
}

}  // namespace
}  // namespace tessel::passes
