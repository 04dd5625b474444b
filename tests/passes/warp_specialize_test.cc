// warp_specialize and its TMA copy plans, without a GPU: which loops it
// takes (and which it leaves to the cp.async pipeline: every pass config,
// tensors whose rows are not whole 16-byte chunks), the boxes of each copy,
// and the tensor maps launch() encodes from them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "src/passes/pipeline.h"
#include "src/passes/tma_copy.h"
#include "src/runtime/tensor_maps.h"
#include "tessel/tessel.h"
#include "tests/codegen/test_programs.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

bool Specialized(const LoweringState& st) {
  bool found = false;
  ForEachStmt(st.program.body, [&](const ir::Stmt& s) {
    found |= s->kind == ir::StmtKind::kWarpSpecialize;
  });
  return found;
}

std::vector<const ir::CopyNode*> GlobalToShared(const ir::Stmt& body) {
  std::vector<const ir::CopyNode*> out;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* c = s.As<ir::CopyNode>())
      if (c->src.buffer->scope == ir::Scope::kGlobal &&
          c->dst.buffer->scope == ir::Scope::kShared)
        out.push_back(c);
  });
  return out;
}

testing::GemmShape SampleTile() {
  return testing::WgmmaSampleTileGemm(DataType::kF16, /*transpose_b=*/false);
}

TEST(WarpSpecialize, TakesThePipelinedGemmOnSm90a) {
  LoweringState st = RunPasses(testing::Gemm(SampleTile()), "warp_specialize");
  EXPECT_TRUE(Specialized(st)) << ir::ToString(st.program);
  EXPECT_EQ(st.producer_threads, 128);
  EXPECT_EQ(st.tma_barriers.size(), 2u);
}

TEST(WarpSpecialize, EverySwitchKeepsTheCpAsyncPipeline) {
  const ir::Program p = testing::Gemm(SampleTile());
  for (PassConfig c : {PassConfig{.disable_tma_lower = true},
                       PassConfig{.disable_warp_specialized = true},
                       PassConfig{.disable_async_copy = true}}) {
    LoweringState st = RunPasses(p, "inject_pipeline", c);
    EXPECT_FALSE(Specialized(st)) << c.ToString();
    EXPECT_EQ(st.producer_threads, 0) << c.ToString();
  }
  // sm_80 has no TMA.
  EXPECT_FALSE(
      Specialized(RunPasses(p, "inject_pipeline", {}, Target::cuda("sm_80"))));
}

TEST(WarpSpecialize, RowsOfPartial16ByteChunksFallBack) {
  testing::GemmShape s = SampleTile();
  s.k = 4097;  // A's rows are 8194 bytes
  LoweringState st = RunPasses(testing::Gemm(s), "warp_specialize");
  EXPECT_FALSE(Specialized(st));
  std::vector<const ir::CopyNode*> copies = GlobalToShared(st.program.body);
  ASSERT_FALSE(copies.empty());
  std::string why;
  EXPECT_FALSE(PlanTmaCopy(*copies[0], st, &why).has_value());
  EXPECT_EQ(why, "rows of the tensor are not whole 16-byte chunks");
}

// The sample tile (256x128x64 f16, NN): A one [256, 64] box under the
// 128-byte swizzle; B [64, 128] in two 128-byte atoms, two [64, 64] boxes.
TEST(TmaCopy, BoxesFollowTheTileLayout) {
  LoweringState st = RunPasses(testing::Gemm(SampleTile()), "layout_inference");
  std::vector<const ir::CopyNode*> copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 2u);
  std::string why;
  std::optional<TmaCopyPlan> a = PlanTmaCopy(*copies[0], st, &why);
  std::optional<TmaCopyPlan> b = PlanTmaCopy(*copies[1], st, &why);
  ASSERT_TRUE(a && b) << why;
  EXPECT_EQ(a->box, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(a->swizzle_bytes, 128);
  EXPECT_EQ(a->boxes, 1);
  EXPECT_EQ(a->bytes, 256 * 64 * 2);
  EXPECT_EQ(b->box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(b->boxes, 2);
  EXPECT_EQ(b->box_cols, 64);
  EXPECT_EQ(b->bytes, 64 * 128 * 2);
}

// The lowered kernel names one tensor map per (tensor, box, swizzle) and
// asks launch() for 16-byte aligned tensors.
TEST(TmaCopy, TensorMapsAndAlignmentOfTheLoweredKernel) {
  LoweringState st = RunPasses(testing::Gemm(SampleTile()), "");
  ASSERT_EQ(st.tensor_maps.size(), 2u);
  EXPECT_EQ(st.tensor_maps[0].name, "A_tma");
  EXPECT_EQ(st.tensor_maps[1].box, (std::vector<int64_t>{64, 64}));
  int tma_alignments = 0;
  for (const AlignmentRequirement& a : st.alignment)
    tma_alignments += a.reason == "TMA copies" && a.multiple == 8;
  EXPECT_EQ(tma_alignments, 2);
}

TEST(TensorMaps, SpecFromTheTensorInnermostFirst) {
  TensorMapParam m{
      .param = 0, .name = "B_tma", .box = {64, 64}, .swizzle_bytes = 128};
  TensorView t = TensorView::Contiguous(uint64_t{1} << 20, f16, {300, 136});
  absl::StatusOr<jit::TensorMapSpec> spec = runtime::TensorMapSpecFor(m, t);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->dims, (std::vector<uint64_t>{136, 300}));
  EXPECT_EQ(spec->strides, (std::vector<uint64_t>{272}));
  EXPECT_EQ(spec->box, (std::vector<uint32_t>{64, 64}));
  EXPECT_EQ(spec->swizzle, jit::TmaSwizzle::k128B);
  EXPECT_TRUE(jit::ValidateTensorMap(*spec, t.data).ok());
  // A view whose rank is not the map's is refused, not encoded.
  TensorView flat = TensorView::Contiguous(t.data, f16, {300 * 136});
  EXPECT_FALSE(runtime::TensorMapSpecFor(m, flat).ok());
  // A pointer off 16 bytes fails the copy engine's rule by name.
  absl::Status off = jit::ValidateTensorMap(*spec, t.data + 2);
  EXPECT_EQ(off.code(), absl::StatusCode::kInvalidArgument) << off;
}

}  // namespace
}  // namespace tessel::passes
