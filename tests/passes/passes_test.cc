// Scheduler passes: barrier placement (a real hazard gets its barrier, a
// double-buffered loop does not between its stages) and golden IR after
// pipelining and after barrier insertion for GEMM and linear attention
// backward. Regenerate goldens with TESSEL_UPDATE_GOLDEN=1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_format.h"
#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "src/passes/pass_list.h"
#include "src/passes/thread_memory.h"
#include "tessel/tessel.h"
#include "tests/codegen/test_programs.h"
#include "tests/dsl/seed_programs.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

LoweringState RunTo(const ir::Program& p, const std::string& stop,
                    PassConfig config = {}) {
  return RunPasses(p, stop, config);
}

int CountSyncs(const ir::Stmt& s) {
  int n = 0;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    n += x->kind == ir::StmtKind::kSyncThreads;
  });
  return n;
}

// The statement list directly inside the first serial loop.
std::vector<ir::Stmt> LoopBody(const ir::Stmt& s) {
  std::vector<ir::Stmt> out;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    const auto* f = x.As<ir::ForNode>();
    if (!out.empty() || f == nullptr || f->for_kind != ir::ForKind::kSerial)
      return;
    if (const auto* q = f->body.As<ir::SeqNode>()) out = q->stmts;
  });
  return out;
}

namespace T = tessel;

// A kernel of 128 threads with a [128, n] f32 fragment (blocked: n
// elements per thread) and a local array of `local` elements of `dtype`.
ir::Program ThreadArrays(int n, int local, DataType dtype) {
  T::ProgramBuilder p("thread_arrays");
  auto X = p.tensor("X", {128, n}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({128, n}, T::f32, "x");
    auto l = T::alloc_local({local}, dtype, "l");
    T::copy(X(0, 0), x);
    T::copy(x, X(0, 0));
    l(0) = T::cast(X(0, 0), dtype);
    X(0, 1) = T::cast(l(0), T::f32);
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return prog->ir();
}

absl::Status LayoutsOf(const ir::Program& p) {
  LoweringState st{.program = p, .target = Target::sm90a()};
  return RunPasses(st, "layout_inference");
}

// The limit is on the sum per thread, 8- and 16-bit elements counted as 4
// bytes: exactly at it compiles, one element more does not.
TEST(ThreadMemory, LimitIsOnTheSumPerThread) {
  const int at_limit = static_cast<int>(kMaxThreadMemoryBytes / 4);
  LoweringState st =
      RunTo(ThreadArrays(64, at_limit - 64, T::f32), "layout_inference");
  ThreadMemory m = MeasureThreadMemory(st);
  ASSERT_EQ(m.arrays.size(), 2u);
  EXPECT_EQ(m.arrays[0].bytes, 64 * 4);  // x: 64 elements per thread
  EXPECT_EQ(m.arrays[1].bytes, (at_limit - 64) * 4);
  EXPECT_EQ(m.total_bytes, kMaxThreadMemoryBytes);
  EXPECT_TRUE(LayoutsOf(ThreadArrays(64, at_limit - 64, T::f32)).ok());
  EXPECT_TRUE(LayoutsOf(ThreadArrays(64, at_limit - 64, T::f16)).ok());
  for (DataType t : {T::f32, T::f16, T::i8, T::f64}) {
    const int over = t == T::f64 ? at_limit / 2 - 31 : at_limit - 63;
    absl::Status s = LayoutsOf(ThreadArrays(64, over, t));
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted)
        << std::string(dtype_name(t)) << ": " << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr("(x 256 B, l ")) << s;
  }
}

TEST(Barriers, RealHazardGetsItsBarrier) {
  LoweringState st = RunTo(testing::ReverseTile(4), "insert_barriers");
  EXPECT_EQ(CountSyncs(st.program.body), 1);
  // Between the copy into S and the loop that reads it.
  std::string text = ir::ToString(st.program);
  size_t copy = text.find("T.copy"), sync = text.find("T.sync_threads()"),
         loop = text.find("T.Parallel");
  EXPECT_LT(copy, sync);
  EXPECT_LT(sync, loop);
}

TEST(Barriers, DoubleBufferedStagesDoNotConflict) {
  LoweringState st = RunTo(testing::DoubleBuffered(8), "insert_barriers");
  std::vector<ir::Stmt> body = LoopBody(st.program.body);
  ASSERT_EQ(body.size(), 3u) << ir::ToString(st.program);
  // One barrier at the top of the iteration (the loop-carried hazard on
  // S[k % 2]), none between the write of S[(k + 1) % 2] and the read of
  // S[k % 2].
  EXPECT_EQ(body[0]->kind, ir::StmtKind::kSyncThreads);
  EXPECT_EQ(body[1]->kind, ir::StmtKind::kFor);
  EXPECT_EQ(body[2]->kind, ir::StmtKind::kFor);
}

// The cp.async pipeline (sm_90a's warp-specialized one: WarpSpecialized.*).
constexpr PassConfig kCpAsync{.disable_warp_specialized = true};

TEST(Barriers, PipelinedGemmHasOneBarrierPerIteration) {
  LoweringState st = RunTo(testing::Gemm({}), "insert_barriers", kCpAsync);
  std::vector<ir::Stmt> body = LoopBody(st.program.body);
  ASSERT_GE(body.size(), 3u);
  EXPECT_NE(body[0].As<ir::EvaluateNode>(), nullptr);  // cp_async_wait
  EXPECT_EQ(body[1]->kind, ir::StmtKind::kSyncThreads);
  EXPECT_EQ(CountSyncs(st.program.body), 1);
}

TEST(Barriers, ConsecutiveAtomicsNeedNone) {
  LoweringState st = RunTo(testing::AtomicAccumulate(4, 64), "insert_barriers");
  // copy -> barrier -> atomic; nothing else.
  EXPECT_EQ(CountSyncs(st.program.body), 1);
}

TEST(Barriers, DisabledThreadSyncInsertsNothing) {
  LoweringState st = RunTo(testing::ReverseTile(4), "insert_barriers",
                           {.disable_thread_sync = true});
  EXPECT_EQ(CountSyncs(st.program.body), 0);
}

TEST(Barriers, SyncInsideThreadDependentBranchIsRejected) {
  // if (v[0] > 0) { copy X -> S; read S } with v a per-thread variable.
  ir::Program p = testing::ReverseTile(1);
  ir::Buffer v = ir::MakeBuffer("flag", f32, {1}, ir::Scope::kVar);
  const auto* k = p.body.As<ir::KernelNode>();
  const auto* alloc = k->body.As<ir::AllocateNode>();
  ir::Stmt guarded = ir::MakeStmt<ir::IfThenElseNode>(
      ir::Load(v, {0}) > ir::Expr(0.0), alloc->body, ir::Stmt(),
      ir::SourceLoc::current());
  p.body = ir::MakeStmt<ir::KernelNode>(
      k->grid, k->threads, k->block_vars,
      ir::MakeStmt<ir::AllocateNode>(
          alloc->buffer,
          ir::MakeStmt<ir::AllocateNode>(v, guarded, ir::SourceLoc()),
          ir::SourceLoc()),
      k->loc);
  LoweringState st;
  st.program = p;
  st.target = Target::sm90a();
  absl::Status s = RunPasses(st, "insert_barriers");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("differs between threads"));
}

// ---------------------------------------------------------------- shared plan

// Two 48 KB tiles, each written whole at the top of an iteration and read
// in it (or, carried, b written only from the second iteration on, so one
// iteration's b may reach the next), and a 112 KB tile every iteration
// reads: 208 KB apart (one block on sm_90a either way), 160 KB with a and
// b sharing bytes (what fits sm_80).
ir::Program TwoIterationTiles(bool carried) {
  namespace T = tessel;
  T::ProgramBuilder p("two_tiles");
  auto X = p.tensor("X", {4, 96, 128}, T::f32);
  auto Y = p.tensor("Y", {4, 96, 128}, T::f32);
  auto Z = p.tensor("Z", {224, 128}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto a = T::alloc_shared({96, 128}, T::f32, "a");
    auto b = T::alloc_shared({96, 128}, T::f32, "b");
    auto c = T::alloc_shared({224, 128}, T::f32, "c");
    T::copy(Z, c);
    for (auto i : T::Serial(4)) {
      T::copy(X(i, T::slice(0, 96), T::slice(0, 128)), a);
      T::copy(a, Y(i, T::slice(0, 96), T::slice(0, 128)));
      if (carried) {
        T::If(i > 0,
              [&] { T::copy(X(i, T::slice(0, 96), T::slice(0, 128)), b); });
      } else {
        T::copy(X(i, T::slice(0, 96), T::slice(0, 128)), b);
      }
      T::copy(b, Y(i, T::slice(0, 96), T::slice(0, 128)));
      T::copy(c(T::slice(0, 96), T::slice(0, 128)),
              Y(i, T::slice(0, 96), T::slice(0, 128)));
    }
  }
  return p.finish()->ir();
}

// The plan's offsets by buffer name, and its size (the plan itself keys
// buffer nodes, which live as long as the lowering state).
struct NamedPlan {
  std::map<std::string, int64_t> offset;
  int64_t total_bytes = 0;
};

absl::StatusOr<NamedPlan> Plan(const ir::Program& p, Target target) {
  LoweringState st;
  st.program = p;
  st.target = target;
  absl::Status s = RunPasses(st, "plan_shared_memory");
  if (!s.ok()) return s;
  NamedPlan plan{.total_bytes = st.smem.total_bytes};
  for (const auto& [b, off] : st.smem.offset) plan.offset[b->name] = off;
  return plan;
}

int64_t OffsetOf(const NamedPlan& plan, const std::string& name) {
  auto it = plan.offset.find(name);
  return it == plan.offset.end() ? -1 : it->second;
}

TEST(SharedPlan, IterationLocalTilesShareBytesOnlyWhenTheyMustFit) {
  // sm_90a (227 KB): they fit apart, and sharing would not fit a second
  // block: no sharing, no barrier it would need.
  absl::StatusOr<NamedPlan> roomy =
      Plan(TwoIterationTiles(false), Target::sm90a());
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_NE(OffsetOf(*roomy, "a"), OffsetOf(*roomy, "b"));
  // sm_80 (163 KB): one iteration uses a, then b, so they share bytes.
  absl::StatusOr<NamedPlan> tight =
      Plan(TwoIterationTiles(false), Target::cuda("sm_80"));
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_EQ(OffsetOf(*tight, "a"), OffsetOf(*tight, "b"));
  EXPECT_EQ(tight->total_bytes, (96 + 224) * 128 * 4);
  // The barrier planner orders b's writes after a's reads (same bytes):
  // one barrier more than with the tiles apart.
  auto syncs = [](Target target) {
    LoweringState st;
    st.program = TwoIterationTiles(false);
    st.target = target;
    EXPECT_TRUE(RunPasses(st, "insert_barriers").ok());
    return CountSyncs(st.program.body);
  };
  EXPECT_GT(syncs(Target::cuda("sm_80")), syncs(Target::sm90a()));
}

TEST(SharedPlan, CarriedTileKeepsItsBytes) {
  absl::StatusOr<NamedPlan> tight =
      Plan(TwoIterationTiles(true), Target::cuda("sm_80"));
  ASSERT_FALSE(tight.ok());
  EXPECT_EQ(tight.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(tight.status().message(), ::testing::HasSubstr("a 49152 B"));
}

// A persistent grid: one 1-d block index, a loop over tiles in both roles
// binding bx and by per tile, the stage counted across tiles.
TEST(WarpSpecialized, PersistentGridLoopsOverTiles) {
  ir::Program p = testing::Gemm(testing::WgmmaGemm(false));
  LoweringState st = RunTo(p, "warp_specialize");
  const auto* k = st.program.body.As<ir::KernelNode>();
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->grid.size(), 1u);
  EXPECT_TRUE(st.persistent);
  EXPECT_EQ(st.tile_block_vars.size(), 2u);
  std::string text = ir::ToString(st.program);
  EXPECT_NE(text.find("grid_dim_x"), std::string::npos) << text;
  EXPECT_NE(text.find("(tile * 4 + k) % 3"), std::string::npos) << text;
  LoweringState plain =
      RunTo(p, "warp_specialize", {.disable_persistent_grid = true});
  EXPECT_FALSE(plain.persistent);
  EXPECT_EQ(plain.program.body.As<ir::KernelNode>()->grid.size(), 2u);
}

// ---------------------------------------------------------------- golden

TEST(Golden, GemmAfterPipelining) {
  ExpectGolden(
      "gemm.inject_pipeline",
      DumpState(RunTo(testing::Gemm({}), "inject_pipeline", kCpAsync)));
}
TEST(Golden, GemmAfterBarriers) {
  ExpectGolden(
      "gemm.insert_barriers",
      DumpState(RunTo(testing::Gemm({}), "insert_barriers", kCpAsync)));
}
// The warp-specialized GEMM (TMA producer, wgmma consumers) after every
// pass, lowered code included.
TEST(Golden, WarpSpecializedGemmAfterEveryPass) {
  ir::Program p = testing::Gemm(testing::WgmmaGemm(false));
  std::vector<std::string> names = PassNames();
  for (size_t i = 0; i < names.size(); ++i) {
    ExpectGolden(
        absl::StrFormat("gemm_warp_specialized.%02d_%s", i + 1, names[i]),
        DumpState(RunTo(p, names[i])));
  }
}
// The same GEMM (one consumer warpgroup) on the ping-pong schedule: two
// consumer groups take alternate tiles, their mainloops in turn.
TEST(Golden, PingpongGemmAfterEveryPass) {
  ir::Program p = testing::Gemm(testing::WgmmaGemm(false));
  std::vector<std::string> names = PassNames();
  for (size_t i = 0; i < names.size(); ++i) {
    ExpectGolden(absl::StrFormat("gemm_pingpong.%02d_%s", i + 1, names[i]),
                 DumpState(RunTo(p, names[i], {.pingpong_consumers = true})));
  }
}
TEST(Golden, LinearAttentionBackwardAfterPipelining) {
  absl::StatusOr<Program> p = seed::LinearAttentionBackward(1, 128, 1, 64, 64);
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectGolden("linear_attention_bwd.inject_pipeline",
               DumpState(RunTo(p->ir(), "inject_pipeline")));
}
TEST(Golden, LinearAttentionBackwardAfterBarriers) {
  absl::StatusOr<Program> p = seed::LinearAttentionBackward(1, 128, 1, 64, 64);
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectGolden("linear_attention_bwd.insert_barriers",
               DumpState(RunTo(p->ir(), "insert_barriers")));
}

// The IR dump goes where pass_config.dump_ir says, after every pass; a
// folder that cannot be written is an error, not a silent no-op.
TEST(DumpIr, WritesEveryPassOrSaysWhyNot) {
  const std::string dir = ::testing::TempDir() + "/tessel_dump_ir_test";
  std::filesystem::remove_all(dir);
  LoweringState st{.program = testing::ReverseTile(4),
                   .target = Target::sm90a(),
                   .config = {.dump_ir = dir}};
  ASSERT_TRUE(RunPasses(st).ok());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, PassNames().size() + 1);  // the input, then each pass

  const std::string file = dir + "/a_file";
  std::ofstream(file) << "x";
  LoweringState bad{.program = testing::ReverseTile(4),
                    .target = Target::sm90a(),
                    .config = {.dump_ir = file + "/sub"}};
  absl::Status s = RunPasses(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(),
              ::testing::HasSubstr("pass_config.dump_ir = \"" + file));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::passes
