// One test per user mistake: each must come back from finish() as an
// InvalidArgument naming the op and the line of the call that made it.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "src/ir/buffer.h"
#include "src/ir/op.h"
#include "src/ir/verifier.h"
#include "tessel/tessel.h"
#include "tests/common/error_at.h"
#include "tests/common/one_kernel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

// InvalidArgument at this file's `line`, mentioning every one of `words`.
void ExpectErrorAt(const absl::Status& status, int line,
                   std::initializer_list<std::string> words) {
  testing::ExpectInvalidArgumentAt(status, "verifier_test.cc", line, words);
}

using testing::BuildOneKernel;  // G (global f32 [64, 64]) in one kernel

TEST(VerifierTest, AcceptsAWellFormedKernel) {
  EXPECT_TRUE(BuildOneKernel([](const T::Buffer& G) {
                auto s = T::alloc_shared({64, 64}, T::f32, "s");
                T::copy(G, s);
                T::copy(s, G);
              }).ok());
}

TEST(VerifierTest, CopyShapeMismatch) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto a = T::alloc_shared({32, 32}, T::f32, "a");
    auto b = T::alloc_fragment({32, 16}, T::f32, "b");
    line = __LINE__ + 1;
    T::copy(a, b);
  });
  ExpectErrorAt(s, line,
                {"copy", "shape mismatch", "a (shared f32", "extents [32, 32]",
                 "b (fragment f32", "extents [32, 16]"});
}

TEST(VerifierTest, GemmShapeMismatch) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto a = T::alloc_shared({64, 32}, T::f16, "a");
    auto b = T::alloc_shared({16, 64}, T::f16, "b");
    auto c = T::alloc_fragment({64, 64}, T::f32, "c");
    line = __LINE__ + 1;
    T::gemm(a, b, c);
  });
  ExpectErrorAt(s, line,
                {"gemm", "shape mismatch", "K=32 vs 16", "extents [64, 32]"});
}

TEST(VerifierTest, GemmTransposeIsTakenIntoAccount) {
  EXPECT_TRUE(BuildOneKernel([](const T::Buffer&) {
                auto a = T::alloc_shared({32, 64}, T::f16, "a");
                auto b = T::alloc_shared({64, 32}, T::f16, "b");
                auto c = T::alloc_fragment({64, 64}, T::f32, "c");
                T::gemm(a, b, c, {.transpose_A = true, .transpose_B = true});
              }).ok());
}

TEST(VerifierTest, GemmDtypeMismatch) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto a = T::alloc_shared({64, 32}, T::f16, "a");
    auto b = T::alloc_shared({32, 64}, T::bf16, "b");
    auto c = T::alloc_fragment({64, 64}, T::f32, "c");
    line = __LINE__ + 1;
    T::gemm(a, b, c);
  });
  ExpectErrorAt(s, line,
                {"gemm", "differ in dtype", "a (shared f16", "b (shared bf16"});
}

TEST(VerifierTest, GemmUnsupportedAccumulator) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto a = T::alloc_shared({64, 32}, T::bf16, "a");
    auto b = T::alloc_shared({32, 64}, T::bf16, "b");
    auto c = T::alloc_fragment({64, 64}, T::f16, "c");
    line = __LINE__ + 1;
    T::gemm(a, b, c);
  });
  ExpectErrorAt(s, line,
                {"gemm", "unsupported dtypes", "bf16", "c (fragment f16"});
}

TEST(VerifierTest, GemmAccumulatorMustBeAFragment) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto a = T::alloc_shared({64, 32}, T::f16, "a");
    auto b = T::alloc_shared({32, 64}, T::f16, "b");
    auto c = T::alloc_shared({64, 64}, T::f32, "c");
    line = __LINE__ + 1;
    T::gemm(a, b, c);
  });
  ExpectErrorAt(s, line,
                {"gemm", "c (shared f32 [64, 64])", "must be a fragment"});
}

TEST(VerifierTest, GemmOperandsMustBeSharedOrFragment) {
  int line = 0;
  T::ProgramBuilder p("test");
  auto A = p.tensor("A", {64, 32}, T::f16);
  {
    T::Kernel kernel(1);
    auto b = T::alloc_shared({32, 64}, T::f16, "b");
    auto c = T::alloc_fragment({64, 64}, T::f32, "c");
    line = __LINE__ + 1;
    T::gemm(A, b, c);
  }
  ExpectErrorAt(
      p.finish().status(), line,
      {"gemm", "A (global f16 [64, 32])", "must be shared or fragment"});
}

TEST(VerifierTest, ReduceDimOutOfRange) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto x = T::alloc_fragment({32, 64}, T::f32, "x");
    auto m = T::alloc_fragment({32}, T::f32, "m");
    line = __LINE__ + 1;
    T::reduce_max(x, m, {.dim = 2});
  });
  ExpectErrorAt(
      s, line,
      {"reduce_max", "dim 2 is out of range", "x (fragment f32 [32, 64])"});
}

TEST(VerifierTest, ReduceDestinationShape) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto x = T::alloc_fragment({32, 64}, T::f32, "x");
    auto m = T::alloc_fragment({64}, T::f32, "m");
    line = __LINE__ + 1;
    T::reduce_sum(x, m, {.dim = 1});
  });
  ExpectErrorAt(s, line,
                {"reduce_sum", "m (fragment f32 [64]) must have shape [32]"});
}

TEST(VerifierTest, AtomicOnANonGlobalBuffer) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto dst = T::alloc_shared({16, 16}, T::f32, "dst");
    auto src = T::alloc_fragment({16, 16}, T::f32, "src");
    line = __LINE__ + 1;
    T::atomic_add(dst, src);
  });
  ExpectErrorAt(
      s, line,
      {"atomic_add", "dst (shared f32 [16, 16])", "not a global tensor"});
}

TEST(VerifierTest, AtomicWithAnUnsupportedDtype) {
  int line = 0;
  T::ProgramBuilder p("test");
  auto O = p.tensor("O", {16, 16}, T::i8);
  {
    T::Kernel kernel(1);
    auto src = T::alloc_fragment({16, 16}, T::i8, "src");
    line = __LINE__ + 1;
    T::atomic_max(O(0, 0), src);
  }
  ExpectErrorAt(
      p.finish().status(), line,
      {"atomic_max", "dtype i8 of O (global i8 [16, 16]) is not supported"});
}

TEST(VerifierTest, AtomicMaxOnHalfIsUnsupported) {
  int line = 0;
  T::ProgramBuilder p("test");
  auto O = p.tensor("O", {16}, T::f16);
  {
    T::Kernel kernel(1);
    for (auto i : T::Parallel(16)) {
      line = __LINE__ + 1;
      T::atomic_max(O(i), 1.0);
    }
  }
  ExpectErrorAt(p.finish().status(), line, {"atomic_max", "dtype f16"});
}

TEST(VerifierTest, RegionStaticallyOutOfBounds) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_shared({16, 16}, T::f32, "t");
    line = __LINE__ + 1;
    T::fill(t(T::slice(8, 24), T::all), 0);
  });
  ExpectErrorAt(s, line,
                {"fill", "out of bounds of t (shared f32 [16, 16]) in dim 0",
                 "extent 16, dim size 16"});
}

TEST(VerifierTest, ElementStoreOutOfBoundsInALoop) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    for (auto i : T::Serial(17)) {
      line = __LINE__ + 1;
      t(i) = 1.0;
    }
  });
  ExpectErrorAt(s, line, {"store to t", "ranges over [0, 16]"});
}

TEST(VerifierTest, GlobalRegionsMayRunPastTheEdge) {
  // A 48-row tile at row 32 of a 64-row tensor: the boundary rule applies.
  EXPECT_TRUE(BuildOneKernel([](const T::Buffer& G) {
                auto t = T::alloc_shared({48, 64}, T::f32, "t");
                T::copy(G(32, 0), t);
                T::copy(t, G(32, 0));
              }).ok());
}

TEST(VerifierTest, GlobalRegionWhollyOutside) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto t = T::alloc_shared({16, 64}, T::f32, "t");
    line = __LINE__ + 1;
    T::copy(G(64, 0), t);
  });
  ExpectErrorAt(s, line,
                {"copy", "out of bounds of G (global f32 [64, 64]) in dim 0"});
}

TEST(VerifierTest, BufferUsedOutsideItsScope) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    T::Buffer inner;
    for (auto i : T::Serial(2)) {
      (void)i;
      inner = T::alloc_shared({16}, T::f32, "inner");
    }
    line = __LINE__ + 1;
    T::clear(inner);
  });
  ExpectErrorAt(
      s, line,
      {"fill", "buffer inner (shared f32 [16]) is used outside its scope"});
}

TEST(VerifierTest, BufferOfAnotherProgram) {
  T::Buffer foreign;
  {
    T::ProgramBuilder other("other");
    foreign = other.tensor("X", {16}, T::f32);
  }
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    line = __LINE__ + 1;
    T::copy(foreign, t);
  });
  ExpectErrorAt(
      s, line,
      {"copy", "buffer X (global f32 [16]) is used outside its scope"});
}

TEST(VerifierTest, VariableUsedOutsideItsScope) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::i32, "t");
    T::Expr leaked;
    for (auto i : T::Serial(4, {.name = "leaky"})) leaked = i;
    line = __LINE__ + 1;
    T::fill(t, leaked);
  });
  ExpectErrorAt(s, line, {"fill", "variable leaky is used outside its scope"});
}

TEST(VerifierTest, OpOutsideAKernel) {
  T::ProgramBuilder p("test");
  auto G = p.tensor("G", {64}, T::f32);
  int line = __LINE__ + 1;
  T::fill(G, 0);
  ExpectErrorAt(p.finish().status(), line,
                {"fill", "outside a T::Kernel scope"});
}

TEST(VerifierTest, AllocationOutsideAKernel) {
  T::ProgramBuilder p("test");
  int line = __LINE__ + 1;
  auto t = T::alloc_shared({16}, T::f32);
  (void)t;
  ExpectErrorAt(p.finish().status(), line,
                {"alloc_shared", "outside a T::Kernel scope"});
}

TEST(VerifierTest, NestedKernels) {
  T::ProgramBuilder p("test");
  int line = 0;
  {
    T::Kernel outer(4);
    line = __LINE__ + 1;
    T::Kernel inner(2);
  }
  ExpectErrorAt(p.finish().status(), line,
                {"T::Kernel", "nested inside the T::Kernel"});
}

TEST(VerifierTest, NegativeNumStages) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    line = __LINE__ + 1;
    for (auto k : T::Pipelined(4, {.num_stages = -1})) (void)k;
  });
  ExpectErrorAt(s, line, {"T::Pipelined", "num_stages = -1 is negative"});
}

TEST(VerifierTest, ScopeLeftOpen) {
  T::ProgramBuilder p("test");
  int line = __LINE__ + 1;
  T::Kernel kernel(1);
  absl::Status s = p.finish().status();
  ExpectErrorAt(s, line,
                {"T::Kernel", "scope still open when finish() was called"});
}

TEST(VerifierTest, CallAfterFinish) {
  T::ProgramBuilder p("test");
  auto G = p.tensor("G", {64}, T::f32);
  {
    T::Kernel kernel(1);
    T::fill(G, 0);
  }
  ASSERT_TRUE(p.finish().ok());
  int line = 0;
  {
    line = __LINE__ + 1;
    T::Kernel late(1);
  }
  ExpectErrorAt(p.finish().status(), line,
                {"T::Kernel", "called after ProgramBuilder::finish()"});
}

TEST(VerifierTest, FinishTwice) {
  T::ProgramBuilder p("test");
  { T::Kernel kernel(1); }
  ASSERT_TRUE(p.finish().ok());
  int line = __LINE__ + 1;
  ExpectErrorAt(p.finish().status(), line, {"finish", "called twice"});
}

TEST(VerifierTest, TileOpInsideParallel) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    for (auto i : T::Parallel(16)) {
      (void)i;
      line = __LINE__ + 1;
      T::clear(t);
    }
  });
  ExpectErrorAt(s, line, {"fill", "inside a T::Parallel loop"});
}

TEST(VerifierTest, ExpressionErrorIsReportedAtTheNextOp) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    for (auto i : T::Parallel(16)) {
      line = __LINE__ + 1;
      t(i) = t(i) & 1;
    }
  });
  ExpectErrorAt(s, line, {"bit operations take integers", "f32"});
}

TEST(VerifierTest, IndexCountMustMatchRank) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16, 16}, T::f32, "t");
    line = __LINE__ + 1;
    t(0) = 1.0;
  });
  ExpectErrorAt(
      s, line,
      {"store to t", "has 1 indices but t (fragment f32 [16, 16]) has rank 2"});
}

TEST(VerifierTest, TwoStartPointsHaveNoExtent) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto t = T::alloc_shared({16, 16}, T::f32, "t");
    line = __LINE__ + 1;
    T::copy(G(0, 0), t(0, 0));
  });
  ExpectErrorAt(s, line, {"copy", "both operands", "are start points"});
}

TEST(VerifierTest, IfConditionMustBeBool) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    for (auto i : T::Parallel(16)) {
      line = __LINE__ + 1;
      T::If(i, [&] { t(i) = 0; });
    }
  });
  ExpectErrorAt(s, line, {"T::If", "must be bool"});
}

TEST(VerifierTest, ElseMustFollowItsIf) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto t = T::alloc_fragment({16}, T::f32, "t");
    for (auto i : T::Parallel(16)) {
      auto chain = T::If(i < 8, [&] { t(i) = 0; });
      t(i) = 2;
      line = __LINE__ + 1;
      chain.Else([&] { t(i) = 1; });
    }
  });
  ExpectErrorAt(s, line, {"Else", "must directly follow"});
}

TEST(VerifierTest, TensorDeclaredInsideTheKernel) {
  T::ProgramBuilder p("test");
  int line = 0;
  {
    T::Kernel kernel(1);
    line = __LINE__ + 1;
    p.tensor("late", {4}, T::f32);
  }
  ExpectErrorAt(p.finish().status(), line,
                {"tensor late", "before the T::Kernel"});
}

TEST(VerifierTest, MbarrierIdWithoutAList) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    line = __LINE__ + 1;
    T::mbarrier_arrive(0);
  });
  ExpectErrorAt(s, line, {"mbarrier_arrive", "create_list_of_mbarrier"});
}

TEST(VerifierTest, MbarrierIndexOutOfBounds) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer&) {
    auto bars = T::alloc_barrier({128, 128}, "bars");
    line = __LINE__ + 1;
    T::mbarrier_wait_parity(bars[2], 0);
  });
  ExpectErrorAt(s, line,
                {"mbarrier_wait_parity", "out of bounds of bars (barrier"});
}

TEST(VerifierTest, HandBuiltIrIsCheckedToo) {
  // Passes build IR without the DSL; the verifier still names the op's line.
  ir::Buffer t =
      ir::MakeBuffer("t", DataType::kF32, {16}, ir::Scope::kFragment);
  int line = __LINE__ + 1;
  ir::SourceLoc loc = ir::SourceLoc::current();
  ir::Stmt store = ir::MakeStmt<ir::StoreNode>(
      t, std::vector<ir::Expr>{0}, ir::IntImm(DataType::kI32, 1), loc);
  ir::Stmt body = ir::MakeStmt<ir::AllocateNode>(t, store, loc);
  ir::Var bx("bx");
  ir::Program p{
      "hand",
      {},
      {},
      ir::MakeStmt<ir::KernelNode>(std::vector<ir::Expr>{1}, 32,
                                   std::vector<ir::Var>{bx}, body, loc)};
  ExpectErrorAt(ir::Verify(p), line,
                {"store to t", "stored value has dtype i32"});
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

TEST(VerifierTest, StartPointAlignedOntoTheWrongDims) {
  // dQ(b, s, h, d) with a [64, 64] tile aligns to dims (h, d); h has 4.
  T::ProgramBuilder p("test");
  auto dQ = p.tensor("dQ", {2, 256, 4, 64}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1);
    auto t = T::alloc_shared({64, 64}, T::f32, "t");
    line = __LINE__ + 1;
    T::atomic_add(dQ(0, 64, 1, 0), t);
  }
  ExpectErrorAt(
      p.finish().status(), line,
      {"atomic_add", "dim 2 of dQ (global f32 [2, 256, 4, 64]) has only 4",
       "use T::slice"});
}

}  // namespace
}  // namespace tessel
