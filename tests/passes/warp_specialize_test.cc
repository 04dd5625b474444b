// warp_specialize and its TMA copy plans, without a GPU: which loops it
// takes (also under a block-wide guard, with copy origins read from a
// tensor) and which it leaves to the cp.async pipeline (every pass config,
// tensors whose rows are not whole 16-byte chunks, origins read from a
// tensor the kernel writes), row ranges of a paged gather that fill one
// tile, the boxes of each copy, and the tensor maps launch() encodes from
// them.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "src/passes/pass_list.h"
#include "src/passes/tma_boxes.h"
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

// Segment `by` of A (rows offsets[by] ..) times B, as the varlen flash
// attention reads its sequences: copy origins load offsets[by]; `guard`
// puts the work under a block-uniform test (a row tile past the segment's
// end exits), `write_offsets` makes the kernel write offsets, so that its
// values may change while the kernel runs.
ir::Program SegmentGemm(bool guard, bool write_offsets) {
  namespace T = tessel;
  T::ProgramBuilder p("segment_gemm");
  auto A = p.tensor("A", {1024, 128}, f16);
  auto B = p.tensor("B", {128, 128}, f16);
  auto offsets = p.tensor("offsets", {5}, i32);
  auto C = p.tensor("C", {1024, 128}, f32);
  {
    T::Kernel kernel(4, 4, {.threads = 256});
    auto [bx, by] = kernel.block_index();
    T::Expr start = offsets(by);
    auto As = T::alloc_shared({128, 64}, f16, "A_shared");
    auto Bs = T::alloc_shared({64, 128}, f16, "B_shared");
    auto acc = T::alloc_fragment({128, 128}, f32, "acc");
    auto work = [&] {
      T::clear(acc);
      for (auto k : T::Pipelined(2, {.num_stages = 2})) {
        T::copy(A(start + bx * 128, k * 64), As);
        T::copy(B(k * 64, 0), Bs);
        T::gemm(As, Bs, acc);
      }
      T::copy(acc, C(start + bx * 128, 0));
      if (write_offsets) offsets(by + 1) = 0;
    };
    if (guard) {
      T::If(bx * 128 < offsets(by + 1) - start, work);
    } else {
      work();
    }
  }
  absl::StatusOr<T::Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return program->ir();
}

// Whether a shared tile got a stage dimension (software pipelining).
bool Staged(const LoweringState& st, const std::string& name) {
  bool found = false;
  ForEachStmt(st.program.body, [&](const ir::Stmt& s) {
    if (const auto* a = s.As<ir::AllocateNode>())
      found |= a->buffer->name == name && a->buffer->rank() == 3;
  });
  return found;
}

TEST(WarpSpecialize, TakesALoopUnderABlockGuardWithOriginsFromATensor) {
  LoweringState st = RunPasses(SegmentGemm(true, false), "warp_specialize");
  EXPECT_TRUE(Specialized(st)) << ir::ToString(st.program);
  // The cp.async path pipelines the same copies ahead of their iteration.
  st = RunPasses(SegmentGemm(true, false), "inject_pipeline",
                 {.disable_warp_specialized = true});
  EXPECT_TRUE(Staged(st, "A_shared")) << ir::ToString(st.program);
}

TEST(WarpSpecialize, OriginsFromATensorTheKernelWritesStaySynchronous) {
  LoweringState st = RunPasses(SegmentGemm(false, true), "warp_specialize");
  EXPECT_FALSE(Specialized(st));
  std::vector<const ir::CopyNode*> copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 2u);
  std::string why;
  EXPECT_FALSE(PlanTmaCopy(*copies[0], st, &why).has_value());
  EXPECT_EQ(why, "origin depends on values read per thread");
  EXPECT_TRUE(PlanTmaCopy(*copies[1], st, &why).has_value()) << why;
  st = RunPasses(SegmentGemm(false, true), "inject_pipeline",
                 {.disable_warp_specialized = true});
  EXPECT_FALSE(Staged(st, "A_shared"));
  EXPECT_TRUE(Staged(st, "B_shared"));
}

// A pipelined gemm whose step also loads a row vector (a bias, as flash
// attention's backward loads LSE) of `cols` f32 and reads it element by
// element on the accumulator; `write` makes the step write it too.
ir::Program GemmWithRowVector(int cols, bool write) {
  namespace T = tessel;
  T::ProgramBuilder p("gemm_row_vector");
  auto A = p.tensor("A", {128, 128}, f16);
  auto B = p.tensor("B", {128, 256}, f16);
  auto bias = p.tensor("bias", {2, 256}, f32);
  auto C = p.tensor("C", {128, 128}, f32);
  {
    T::Kernel kernel(1, {.threads = 256});
    auto As = T::alloc_shared({128, 64}, f16, "A_shared");
    auto Bs = T::alloc_shared({64, 128}, f16, "B_shared");
    auto row = T::alloc_shared({cols}, f32, "row");
    auto acc = T::alloc_fragment({128, 128}, f32, "acc");
    auto sum = T::alloc_fragment({128, 128}, f32, "sum");
    T::clear(sum);
    for (auto k : T::Pipelined(2, {.num_stages = 2})) {
      T::copy(A(0, k * 64), As);
      T::copy(B(k * 64, 0), Bs);
      T::copy(bias(k, T::slice(0, cols)), row);
      T::gemm(As, Bs, acc, {.clear_accum = true});
      for (auto [i, j] : T::Parallel(128, 128))
        sum(i, j) += acc(i, j) * row(j % cols);
      if (write) row(0) = 1.0f;
    }
    T::copy(sum, C);
  }
  absl::StatusOr<T::Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return program->ir();
}

// The row vector is a one-row TMA box whose stage the consumers read by
// element; one they write, or whose rows are not whole 128-byte lines (the
// TMA's shared alignment), keeps the loop on cp.async.
TEST(WarpSpecialize, ConsumersReadAStagedRowVectorByElement) {
  LoweringState st =
      RunPasses(GemmWithRowVector(128, false), "warp_specialize");
  ASSERT_TRUE(Specialized(st)) << ir::ToString(st.program);
  const std::string ir = ir::ToString(st.program);
  // The stage index in front (the grid is persistent: tiles x 2 steps).
  EXPECT_NE(ir.find("* row[(tile * 2 + i) % 2, k % 128]"), std::string::npos)
      << ir;
  std::vector<const ir::CopyNode*> copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 3u);
  std::string why;
  std::optional<TmaCopyPlan> plan = PlanTmaCopy(*copies[2], st, &why);
  ASSERT_TRUE(plan) << why;
  EXPECT_EQ(plan->box, (std::vector<int64_t>{1, 128}));
  EXPECT_EQ(plan->bytes, 512);
  EXPECT_FALSE(
      Specialized(RunPasses(GemmWithRowVector(128, true), "warp_specialize")));
  st = RunPasses(GemmWithRowVector(16, false), "warp_specialize");
  EXPECT_FALSE(Specialized(st));
  copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 3u);
  EXPECT_FALSE(PlanTmaCopy(*copies[2], st, &why).has_value());
  EXPECT_EQ(why, "one row not of whole 128-byte lines");
}

// A paged gather as decode attention's: each step fills K_shared [64, 128]
// with one copy per (start, rows) range, each from the cache rows that a
// block table gives (a let), then K_shared feeds a gemm. Grid 3-d (split,
// head, sequence), 128 threads: no persistent grid.
ir::Program PagedGather(const std::vector<std::pair<int, int>>& ranges) {
  namespace T = tessel;
  T::ProgramBuilder p("paged_gather");
  auto cache = p.tensor("cache", {4096, 2, 128}, f16);
  auto table = p.tensor("table", {4, 64}, i32);
  auto Q = p.tensor("Q", {64, 128}, f16);
  auto S = p.tensor("S", {4, 2, 64, 64}, f32);
  {
    T::Kernel kernel(1, 2, 4, {.threads = 128});
    auto [split, head, b] = kernel.block_index();
    auto Qs = T::alloc_shared({64, 128}, f16, "Q_shared");
    auto Ks = T::alloc_shared({64, 128}, f16, "K_shared");
    auto acc = T::alloc_fragment({64, 64}, f32, "acc");
    T::copy(Q, Qs);
    T::clear(acc);
    for (auto k : T::Pipelined(4, {.num_stages = 2})) {
      for (const auto& [start, rows] : ranges) {
        T::Expr row = T::let(table(b, k * 4 + start / 16) * 16, "row");
        T::copy(cache(T::slice(row, row + rows), head, T::all),
                Ks(T::slice(start, start + rows), T::all));
      }
      T::gemm(Qs, Ks, acc, {.transpose_B = true});
    }
    T::copy(acc, S(b, head, 0, 0));
  }
  absl::StatusOr<T::Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return program->ir();
}

// Copies of row ranges that fill their tile once go to a one-warp TMA
// producer (one [16, 1, 64] box per page and 128-byte atom); a gap, an
// overlap, or a range off the swizzle period keeps the cp.async pipeline.
TEST(WarpSpecialize, RowRangesThatFillATileTakeTheTma) {
  const std::vector<std::pair<int, int>> pages = {
      {0, 16}, {16, 16}, {32, 16}, {48, 16}};
  LoweringState st = RunPasses(PagedGather(pages), "warp_specialize");
  ASSERT_TRUE(Specialized(st)) << ir::ToString(st.program);
  EXPECT_EQ(st.producer_threads, 32);
  std::vector<const ir::CopyNode*> copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 5u);  // Q, then the pages
  std::string why;
  std::optional<TmaCopyPlan> plan = PlanTmaCopy(*copies[2], st, &why);
  ASSERT_TRUE(plan) << why;
  EXPECT_EQ(plan->box, (std::vector<int64_t>{16, 1, 64}));
  EXPECT_EQ(plan->boxes, 2);
  EXPECT_EQ(plan->bytes, 16 * 128 * 2);
  // A page missing, or one copied twice.
  EXPECT_FALSE(Specialized(RunPasses(PagedGather({{0, 16}, {16, 16}, {48, 16}}),
                                     "warp_specialize")));
  EXPECT_FALSE(Specialized(
      RunPasses(PagedGather({{0, 16}, {16, 16}, {16, 16}, {32, 16}, {48, 16}}),
                "warp_specialize")));
  // Rows 4 .. 19 start inside a swizzle period (8 rows of 128 bytes).
  st = RunPasses(PagedGather({{0, 4}, {4, 16}, {20, 12}, {32, 32}}),
                 "warp_specialize");
  EXPECT_FALSE(Specialized(st));
  copies = GlobalToShared(st.program.body);
  ASSERT_EQ(copies.size(), 5u);
  EXPECT_FALSE(PlanTmaCopy(*copies[2], st, &why).has_value());
  EXPECT_EQ(why, "writes rows that do not start a swizzle period");
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
// asks launch() for 16-byte aligned tensors: A and B for the TMA loads, C
// for the epilogue's TMA stores (128-byte column chunks).
TEST(TmaCopy, TensorMapsAndAlignmentOfTheLoweredKernel) {
  LoweringState st = RunPasses(testing::Gemm(SampleTile()), "");
  ASSERT_EQ(st.tensor_maps.size(), 3u);
  EXPECT_EQ(st.tensor_maps[0].name, "A_tma");
  EXPECT_EQ(st.tensor_maps[1].box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(st.tensor_maps[2].name, "C_tma");
  EXPECT_EQ(st.tensor_maps[2].box.back(), 64);
  int tma_alignments = 0;
  for (const AlignmentRequirement& a : st.alignment)
    tma_alignments += a.reason == "TMA copies" && a.multiple == 8;
  EXPECT_EQ(tma_alignments, 3);  // A, B and C
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
