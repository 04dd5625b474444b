// User bugs the interpreter catches, each as a Status naming the op and the
// user's source line: uninitialised reads, mbarrier waits that can never
// complete, indices out of bounds, bad arguments.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/interp/interpreter.h"
#include "src/ir/op.h"
#include "src/ir/stmt.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"

namespace tessel {
namespace {

namespace T = tessel;
using testing::HasSubstr;

// "<op> at <this file>:<line>: "
std::string At(const char* op, int line) {
  return absl::StrCat(op, " at ", __FILE__, ":", line, ": ");
}

TEST(UninitializedReadTest, CopyFromASharedTileNothingWrote) {
  int line = 0;
  T::ProgramBuilder p("uninit_shared");
  auto Y = p.tensor("Y", {16}, T::f32);
  {
    T::Kernel kernel(1);
    auto s = T::alloc_shared({16}, T::f32, "s");
    auto x = T::alloc_fragment({16}, T::f32, "x");
    line = __LINE__ + 1;
    T::copy(s, x);
    T::copy(x, Y(0));
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor y(f32, {16});
  absl::Status s = interpret(*prog, {&y});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(At("copy", line)));
  EXPECT_THAT(s.message(), HasSubstr("reads s[0] before anything wrote it"));
}

TEST(UninitializedReadTest, ElementLoadOfAFragmentPartlyWritten) {
  int line = 0;
  T::ProgramBuilder p("uninit_fragment");
  auto Y = p.tensor("Y", {16}, T::f32);
  {
    T::Kernel kernel(2);
    auto x = T::alloc_fragment({16}, T::f32, "x");
    for (auto i : T::Parallel(16)) {
      T::If(i < 10, [&] { x(i) = T::cast(i, T::f32); });
    }
    for (auto i : T::Parallel(16)) {
      line = __LINE__ + 1;
      Y(i) = x(i) * 2;
    }
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor y(f32, {16});
  absl::Status s = interpret(*prog, {&y});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  // The read of x, not the store it feeds, is what fails: named a load.
  EXPECT_THAT(s.message(), HasSubstr(At("load", line)));
  EXPECT_THAT(s.message(), HasSubstr("reads x[10] before anything wrote it"));
  EXPECT_THAT(s.message(), HasSubstr("(block (0))"));
}

TEST(UninitializedReadTest, GemmAccumulatingIntoAnUnclearedFragment) {
  int line = 0;
  T::ProgramBuilder p("uninit_gemm");
  auto A = p.tensor("A", {16, 16}, T::f16);
  auto C = p.tensor("C", {16, 16}, T::f32);
  {
    T::Kernel kernel(1);
    auto a = T::alloc_shared({16, 16}, T::f16, "a");
    auto c = T::alloc_fragment({16, 16}, T::f32, "acc");
    T::copy(A(0, 0), a);
    line = __LINE__ + 1;
    T::gemm(a, a, c);  // forgot T::clear(c)
    T::copy(c, C(0, 0));
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a(f16, {16, 16}), c(f32, {16, 16});
  absl::Status s = interpret(*prog, {&a, &c});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(At("gemm", line)));
  EXPECT_THAT(s.message(),
              HasSubstr("reads acc[0, 0] before anything wrote it"));
}

TEST(MbarrierTest, WaitWithoutArriveCanNeverComplete) {
  int line = 0;
  T::ProgramBuilder p("mbarrier_no_arrive");
  auto Y = p.tensor("Y", {1}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    T::create_list_of_mbarrier({128, 128});
    line = __LINE__ + 1;
    T::mbarrier_wait_parity(1, 0);
    Y(0) = 1.0;
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor y(f32, {1});
  absl::Status s = interpret(*prog, {&y});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(At("mbarrier_wait_parity", line)));
  EXPECT_THAT(s.message(), HasSubstr("can never complete"));
  EXPECT_EQ(y.at({0}), 0.0);  // nothing after the wait ran
}

TEST(MbarrierTest, WaitingForTheWrongParity) {
  // After one full phase the barrier is in phase 1: parity 0 has completed,
  // parity 1 is the phase still open.
  for (int parity : {0, 1}) {
    int line = 0;
    T::ProgramBuilder p("mbarrier_parity");
    auto Y = p.tensor("Y", {1}, T::f32);
    {
      T::Kernel kernel(1, {.threads = 64});
      T::create_list_of_mbarrier({64});
      T::mbarrier_arrive(0);
      line = __LINE__ + 1;
      T::mbarrier_wait_parity(0, parity);
      Y(0) = 1.0;
    }
    absl::StatusOr<Program> prog = p.finish();
    ASSERT_TRUE(prog.ok()) << prog.status();
    HostTensor y(f32, {1});
    absl::Status s = interpret(*prog, {&y});
    if (parity == 0) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(y.at({0}), 1.0);
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(s.message(), HasSubstr(At("mbarrier_wait_parity", line)));
      EXPECT_THAT(s.message(), HasSubstr("for parity 1"));
    }
  }
}

TEST(MbarrierTest, ArrivalsShortOfTheCount) {
  // 256 arrivals expected per phase, one arrive of a 128-thread block.
  int line = 0;
  T::ProgramBuilder p("mbarrier_short");
  auto Y = p.tensor("Y", {1}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    T::create_list_of_mbarrier({256});
    T::mbarrier_arrive(0);
    line = __LINE__ + 1;
    T::mbarrier_wait_parity(0, 0);
    Y(0) = 1.0;
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor y(f32, {1});
  absl::Status s = interpret(*prog, {&y});
  EXPECT_THAT(s.message(), HasSubstr(At("mbarrier_wait_parity", line)));
  EXPECT_THAT(s.message(), HasSubstr("still misses 128 of 256 arrivals"));
}

// Index taken from a tensor, so only the run can tell it is out of bounds.
TEST(OutOfBoundsTest, StoreIntoASharedTile) {
  int line = 0;
  T::ProgramBuilder p("oob_shared");
  auto I = p.tensor("I", {1}, T::i32);
  auto Y = p.tensor("Y", {16}, T::f32);
  {
    T::Kernel kernel(1);
    auto s = T::alloc_shared({16}, T::f32, "s");
    T::fill(s, 0);
    line = __LINE__ + 1;
    s(I(0)) = 1.0;
    T::copy(s, Y(0));
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor idx(i32, {1}), y(f32, {16});
  idx.set_flat_int(0, 5);
  EXPECT_TRUE(interpret(*prog, {&idx, &y}).ok());
  EXPECT_EQ(y.at({5}), 1.0);
  idx.set_flat_int(0, 16);
  absl::Status s = interpret(*prog, {&idx, &y});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr(At("store", line)));
  EXPECT_THAT(s.message(),
              HasSubstr("index s[16] is out of bounds of shape [16]"));
}

// A load inside a store's value is named a load, at the user's line.
TEST(OutOfBoundsTest, LoadFromASharedTileIsNamedALoad) {
  int line = 0;
  T::ProgramBuilder p("oob_shared_load");
  auto I = p.tensor("I", {1}, T::i32);
  auto Y = p.tensor("Y", {1}, T::f32);
  {
    T::Kernel kernel(1);
    auto s = T::alloc_shared({16}, T::f32, "s");
    T::fill(s, 0);
    line = __LINE__ + 1;
    Y(0) = s(I(0));
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor idx(i32, {1}), y(f32, {1});
  idx.set_flat_int(0, 16);
  absl::Status s = interpret(*prog, {&idx, &y});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr(At("load", line)));
  EXPECT_THAT(s.message(),
              HasSubstr("index s[16] is out of bounds of shape [16]"));
}

// Outside a global tensor the boundary rule holds (docs/ir.md): the load
// reads 0 and the store is skipped, as on the GPU; a negative index too.
TEST(OutOfBoundsTest, DirectAccessesOfAGlobalTensorFollowTheBoundaryRule) {
  T::ProgramBuilder p("oob_global");
  auto n = p.dim("N");
  auto X = p.tensor("X", {n}, T::f32);
  auto Y = p.tensor("Y", {2}, T::f32);
  {
    T::Kernel kernel(1);
    Y(0) = X(n);      // one past the end: 0
    Y(1) = X(n - 8);  // -1: 0
    X(n) = 5.0f;      // skipped
    X(n - 8) = 5.0f;  // skipped
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor x(f32, {7}), y(f32, {2});
  for (int i = 0; i < 7; ++i) x.set_flat(i, i + 1);
  y.set_flat(0, 9);
  y.set_flat(1, 9);
  ASSERT_TRUE(interpret(*prog, {&x, &y}).ok());
  EXPECT_EQ(y.at({0}), 0.0);
  EXPECT_EQ(y.at({1}), 0.0);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(x.at({i}), i + 1);
}

TEST(OutOfBoundsTest, CopyRegionPastASharedTile) {
  int line = 0;
  T::ProgramBuilder p("oob_region");
  auto I = p.tensor("I", {1}, T::i32);
  auto X = p.tensor("X", {8}, T::f32);
  {
    T::Kernel kernel(1);
    auto s = T::alloc_shared({16}, T::f32, "s");
    T::Expr start = I(0);
    line = __LINE__ + 1;
    T::copy(X(0), s(T::slice(start, start + 8)));
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor idx(i32, {1}), x(f32, {8});
  idx.set_flat_int(0, 12);
  absl::Status s = interpret(*prog, {&idx, &x});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr(At("copy", line)));
  EXPECT_THAT(s.message(), HasSubstr("s[12:20] is out of bounds"));
}

// A tile of gigabytes (no GPU block holds it either) is refused before
// anything is allocated, naming its allocation.
TEST(TileSizeTest, AbsurdTilesAreResourceExhausted) {
  for (bool local : {false, true}) {
    SCOPED_TRACE(local ? "alloc_local" : "alloc_fragment");
    int line = 0;
    T::ProgramBuilder p("huge_tile");
    auto Y = p.tensor("Y", {16}, T::f32);
    {
      T::Kernel kernel(1);
      if (local) {
        line = __LINE__ + 1;
        auto x = T::alloc_local({1 << 30}, T::f32, "x");
        x(0) = 1.0f;
        Y(0) = x(0);
      } else {
        line = __LINE__ + 1;
        auto x = T::alloc_fragment({1 << 20, 1 << 10}, T::f32, "x");
        T::clear(x);
        Y(0) = x(0, 0);
      }
    }
    absl::StatusOr<Program> prog = p.finish();
    ASSERT_TRUE(prog.ok()) << prog.status();
    HostTensor y(f32, {16});
    absl::Status s = interpret(*prog, {&y});
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(s.message(), HasSubstr(At("allocate", line))) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("'x' (" + std::string(local ? "local" : "fragment") +
                          ") holds 1073741824 elements"))
        << s;
  }
}

TEST(ArgumentTest, CountDtypeShapeAndSymbolicSizes) {
  absl::StatusOr<Program> prog = seed::TiledGemmDynamicM(64, 32);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a(f16, {10, 32}), b(f16, {32, 64}), c(f16, {10, 64});
  EXPECT_TRUE(interpret(*prog, {&a, &b, &c}).ok());

  absl::Status s = interpret(*prog, {&a, &b});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("takes 3 tensors (A, B, C), got 2"));

  HostTensor b32(f32, {32, 64});
  s = interpret(*prog, {&a, &b32, &c});
  EXPECT_THAT(
      s.message(),
      HasSubstr("argument 1 ('B') is f32[32, 64], expected f16[32, 64]"));

  HostTensor b_wrong(f16, {32, 65});
  s = interpret(*prog, {&a, &b_wrong, &c});
  EXPECT_THAT(s.message(), HasSubstr("dimension 1 must be 64"));

  HostTensor c_other_m(f16, {11, 64});
  s = interpret(*prog, {&a, &b, &c_other_m});
  EXPECT_THAT(s.message(),
              HasSubstr("argument 2 ('C') is f16[11, 64], expected f16[M, 64]: "
                        "dimension 0 must be 10 (M = 10 from argument 0 ('A') "
                        "dimension 0)"));

  s = interpret(*prog, {&a, nullptr, &c});
  EXPECT_THAT(s.message(), HasSubstr("argument 1 ('B') is null"));

  HostTensor invalid(f16, {-1, 64});
  s = interpret(*prog, {&a, &b, &invalid});
  EXPECT_THAT(s.message(), HasSubstr("argument 2 ('C') is not a valid tensor"));
}

TEST(ArithmeticTest, IntegerDivisionByZero) {
  int line = 0;
  T::ProgramBuilder p("div0");
  auto I = p.tensor("I", {2}, T::i32);
  {
    T::Kernel kernel(1);
    line = __LINE__ + 1;
    I(0) = I(0) / I(1);
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor i(i32, {2});
  i.set_flat_int(0, 7);
  absl::Status s = interpret(*prog, {&i});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(At("store", line)));
  EXPECT_THAT(s.message(), HasSubstr("integer / by zero"));
}

TEST(ThreadingTest, TheFirstFailingBlockIsReportedWhateverTheThreads) {
  T::ProgramBuilder p("fail_late");
  auto I = p.tensor("I", {64}, T::i32);
  {
    T::Kernel kernel(64);
    auto [bx] = kernel.block_index();
    auto s = T::alloc_shared({4}, T::f32, "s");
    s(I(bx)) = 1.0;
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor idx(i32, {64});
  idx.set_flat_int(37, 9);
  idx.set_flat_int(50, 9);
  for (int threads : {1, 4}) {
    absl::Status s = interp::Run(prog->ir(), {&idx}, {.num_threads = threads});
    EXPECT_THAT(s.message(), HasSubstr("(block (37))")) << threads;
  }
}

TEST(CompileTest, UnknownIntrinsicIsRejectedBeforeRunning) {
  const ir::SourceLoc loc = ir::SourceLoc::current();
  ir::Var bx("bx");
  ir::Stmt eval =
      ir::MakeStmt<ir::EvaluateNode>(ir::Call(i32, "warp_shuffle", {}), loc);
  ir::Stmt kernel = ir::MakeStmt<ir::KernelNode>(
      std::vector<ir::Expr>{1}, 32, std::vector<ir::Var>{bx}, eval, loc);
  ir::Program program{"bad", {}, {}, kernel};
  absl::Status s = interp::Run(program, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr(At("evaluate", loc.line())));
  EXPECT_THAT(s.message(), HasSubstr("does not know intrinsic 'warp_shuffle'"));
}

}  // namespace
}  // namespace tessel
