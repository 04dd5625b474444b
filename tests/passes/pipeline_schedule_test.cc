// Pipelined(order, stage) (src/passes/pipeline_schedule.h) on a streamed
// chained gemm, the flash forward's skeleton: S = Q K^T, P = f16(S / 2),
// O += P V over key blocks, P V one iteration late. Golden IR of the
// warp-specialized consumer loop (prologue, steady loop, epilogue), the
// wgmma waits of its lowering, the interpreter against the unscheduled
// program, and the errors of lists that do not fit or break a dependence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "src/passes/pass_list.h"
#include "tessel/tessel.h"
#include "tests/common/count.h"
#include "tests/passes/run_passes.h"

namespace tessel::passes {
namespace {

namespace T = tessel;

constexpr int kM = 128, kN = 320, kD = 64, kBlock = 64;

struct Lists {
  std::vector<int> order, stage;
};

// Body: copy K (0), clear S (1), S = Q K^T (2), copy V (3), S *= 0.5 (4),
// P = S (5), O += P V (6). *loop_line: the Pipelined loop's line.
Program StreamedChainedGemm(const Lists& l, int* loop_line = nullptr) {
  T::ProgramBuilder p("streamed_chained_gemm");
  auto Q = p.tensor("Q", {kM, kD}, T::f16);
  auto K = p.tensor("K", {kN, kD}, T::f16);
  auto V = p.tensor("V", {kN, kD}, T::f16);
  auto O = p.tensor("O", {kM, kD}, T::f32);
  {
    T::Kernel kernel(kM / kBlock, {.threads = 128});
    auto [bx] = kernel.block_index();
    auto Q_shared = T::alloc_shared({kBlock, kD}, T::f16, "Q_shared");
    auto K_shared = T::alloc_shared({kBlock, kD}, T::f16, "K_shared");
    auto V_shared = T::alloc_shared({kBlock, kD}, T::f16, "V_shared");
    auto S = T::alloc_fragment({kBlock, kBlock}, T::f32, "S");
    auto P = T::alloc_fragment({kBlock, kBlock}, T::f16, "P");
    auto acc_o = T::alloc_fragment({kBlock, kD}, T::f32, "acc_o");
    T::copy(Q(bx * kBlock, 0), Q_shared);
    T::clear(acc_o);
    T::PipelineOptions o{
        .num_stages = 3, .order = l.order, .stage = l.stage, .name = "k"};
    if (loop_line != nullptr) *loop_line = __LINE__ + 1;
    for (auto k : T::Pipelined(kN / kBlock, o)) {
      T::copy(K(k * kBlock, 0), K_shared);
      T::clear(S);
      T::gemm(Q_shared, K_shared, S,
              {.transpose_B = true, .policy = T::GemmWarpPolicy::kFullRow});
      T::copy(V(k * kBlock, 0), V_shared);
      for (auto [i, j] : T::Parallel(kBlock, kBlock)) S(i, j) = S(i, j) * 0.5f;
      T::copy(S, P);
      T::gemm(P, V_shared, acc_o, {.policy = T::GemmWarpPolicy::kFullRow});
    }
    T::copy(acc_o, O(bx * kBlock, 0));
  }
  absl::StatusOr<Program> out = p.finish();
  EXPECT_TRUE(out.ok()) << out.status();
  return *out;
}

// P V one iteration late, issued right after Q K^T.
const Lists kOverlap{{-1, 0, 1, -1, 3, 4, 2}, {-1, 0, 0, -1, 0, 0, 1}};

TEST(PipelineSchedule, ConsumerLoopAfterWarpSpecialize) {
  ExpectGolden("streamed_chained_gemm.02_warp_specialize",
               DumpState(RunPasses(StreamedChainedGemm(kOverlap).ir(),
                                   "warp_specialize")));
}

using testing::Count;

// The steady loop commits both gemms before waiting: wait<1> (Q K^T done,
// P V still running) before S is read, wait<0> before P is written; the
// prologue and epilogue wait for their one gemm at once.
TEST(PipelineSchedule, SteadyLoopKeepsPVInFlight) {
  LoweringState st =
      RunPasses(StreamedChainedGemm(kOverlap).ir(), "lower_tile_ops");
  const std::string text = ir::ToString(st.program);
  const size_t loop = text.find("T.serial(1, 5)");
  ASSERT_NE(loop, std::string::npos) << text;
  const std::string steady = text.substr(loop);
  const size_t first_wait = steady.find("\"wgmma_wait\", 1)");
  ASSERT_NE(first_wait, std::string::npos) << steady;
  EXPECT_EQ(Count(steady.substr(0, first_wait), "\"wgmma_commit\""), 2);
  EXPECT_EQ(Count(text, "\"wgmma_wait\", 1)"), 1);
  // Prologue, steady loop, epilogue: one wait<0> each.
  EXPECT_EQ(Count(text, "\"wgmma_wait\", 0)"), 3);
}

// Without lists: today's loop, one gemm waited for at a time.
TEST(PipelineSchedule, WithoutListsTheLoopStaysSerial) {
  LoweringState st = RunPasses(StreamedChainedGemm({}).ir(), "lower_tile_ops");
  const std::string text = ir::ToString(st.program);
  EXPECT_EQ(Count(text, "\"wgmma_wait\", 1)"), 0);
  EXPECT_EQ(Count(text, "T.serial(1, 5)"), 0);
}

std::vector<double> RunOnCpu(const Program& p) {
  auto input = [](std::vector<int64_t> shape, int mul, int mod) {
    HostTensor t(T::f16, shape);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      t.set_flat(i, double(i * mul % mod - mod / 2) / 8);
    return t;
  };
  HostTensor q = input({kM, kD}, 7, 13), k = input({kN, kD}, 5, 11),
             v = input({kN, kD}, 3, 7), o(T::f32, {kM, kD});
  o.fill(-1);
  absl::StatusOr<CompiledKernel> ck = compile(p, {.target = Target::cpu()});
  EXPECT_TRUE(ck.ok()) << ck.status();
  if (!ck.ok()) return {};
  auto view = [](HostTensor& t) {
    return TensorView::Contiguous(t.data(), t.dtype(), t.shape());
  };
  absl::Status s = ck->launch({view(q), view(k), view(v), view(o)});
  EXPECT_TRUE(s.ok()) << s;
  return o.to_doubles();
}

// The interpreter runs the loop in its sequential order: the lists change
// no result.
TEST(PipelineSchedule, InterpreterMatchesTheUnscheduledLoop) {
  std::vector<double> scheduled = RunOnCpu(StreamedChainedGemm(kOverlap));
  std::vector<double> plain = RunOnCpu(StreamedChainedGemm({}));
  ASSERT_EQ(scheduled.size(), plain.size());
  EXPECT_EQ(scheduled, plain);
  EXPECT_NE(plain[0], -1.0);
}

// Lists that do not fit, or that break a dependence, are refused on every
// target, naming the loop's line.
TEST(PipelineSchedule, BadListsNameTheLoop) {
  struct Bad {
    Lists lists;
    std::string says;
  };
  const std::vector<Bad> cases = {
      {{{0, 1, 2}, {0, 0, 0}}, "the lists have 3 entries; the loop body has 7"},
      {{{-1, 0, 1, -1, 3, 4, 2}, {-1, 0, 0, -1, 0, 0, 2}}, "has stage 2"},
      {{{-1, 0, 1, -1, 3, 3, 2}, {-1, 0, 0, -1, 0, 0, 1}}, "has order 3"},
      {{{-1, 0, 1, -1, 3, 4, 2}, {-1, -1, 0, -1, 0, 0, 1}}, "has stage -1"},
      // S *= 0.5 before S = Q K^T.
      {{{-1, 0, 4, -1, 3, 5, 6}, {-1, 0, 0, -1, 0, 0, 0}},
       "cannot be ordered before it"},
      // P V of k - 1 after P of k is written.
      {{{-1, 0, 1, -1, 3, 4, 5}, {-1, 0, 0, -1, 0, 0, 1}},
       "must be ordered before"},
      // S = Q K^T a stage after S *= 0.5 of the same iteration.
      {{{-1, 0, 1, -1, 3, 4, 2}, {-1, 1, 1, -1, 0, 0, 1}}, "would run after"},
  };
  for (const Bad& b : cases) {
    int line = 0;
    Program p = StreamedChainedGemm(b.lists, &line);
    for (Target t : {Target::cpu(), Target::sm90a(), Target::cuda("sm_80")}) {
      absl::StatusOr<CompiledKernel> k = compile(p, {.target = t});
      ASSERT_FALSE(k.ok()) << b.says;
      EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
      const std::string msg(k.status().message());
      EXPECT_NE(msg.find(absl::StrCat("pipeline_schedule_test.cc:", line)),
                std::string::npos)
          << line << " " << msg;
      EXPECT_NE(msg.find(b.says), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace tessel::passes
