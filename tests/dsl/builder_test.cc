// The DSL records what the user wrote: each construct checked in print form.
#include <cstdint>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "src/ir/program.h"
#include "src/ir/stmt.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

std::string Print(const absl::StatusOr<Program>& p) {
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? p->to_string() : "";
}

TEST(BuilderTest, StartPointsTakeTrailingExtentsFromTheOtherOperand) {
  T::ProgramBuilder p("k");
  auto X = p.tensor("X", {2, 4, 128, 64}, T::f16);
  {
    T::Kernel kernel(2, 4);
    auto [bx, by] = kernel.block_index();
    auto t = T::alloc_shared({32, 64}, T::f16, "t");
    T::copy(X(1, 2, bx * 32, 0), t);  // trailing dims
    T::copy(X(by / 2, by % 4, T::slice(bx * 32, bx * 32 + 32), T::all),
            t);  // slices
    T::copy(t, X(0, 3, T::slice(0, 32), T::slice(0, 64)));
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(text,
              HasSubstr("T.copy(X[1, 2, bx * 32:bx * 32 + 32, 0:64], t)"));
  EXPECT_THAT(
      text,
      HasSubstr("T.copy(X[by / 2, by % 4, bx * 32:bx * 32 + 32, 0:64], t)"));
  EXPECT_THAT(text, HasSubstr("T.copy(t, X[0, 3, 0:32, 0:64])"));
}

// A tile with unit dims keeps them where they fit: a [32, 1] column lands
// as a column (it landed as a row, [1, 32], when unit dims were dropped
// first); a [1, 64] tile onto a vector drops its unit dim.
TEST(BuilderTest, StartPointsKeepATilesUnitDims) {
  T::ProgramBuilder p("k");
  auto Y = p.tensor("Y", {64, 64}, T::f32);
  auto R = p.tensor("R", {64}, T::f32);
  {
    T::Kernel kernel(1);
    auto col = T::alloc_fragment({32, 1}, T::f32, "col");
    auto row = T::alloc_fragment({1, 64}, T::f32, "row");
    T::clear(col);
    T::clear(row);
    T::copy(col, Y(8, 3));
    T::copy(row, R(0));
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(text, HasSubstr("T.copy(col, Y[8:40, 3])"));
  EXPECT_THAT(text, HasSubstr("T.copy(row, R)"));
}

TEST(BuilderTest, IfElseIfElseAndScalarVariables) {
  T::ProgramBuilder p("k");
  auto X = p.tensor("X", {64}, T::f32);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({64}, T::f32, "x");
    auto total = T::alloc_var(T::f32, "total");
    T::copy(X, x);
    total = 0;
    for (auto i : T::Serial(64, {.name = "i"})) {
      T::If(x(i) > 1, [&] {
        total += x(i);
      }).ElseIf(x(i) < -1, [&] {
          total -= x(i);
        }).Else([&] { total = T::max(total, 0); });
    }
    for (auto i : T::Parallel(64)) x(i) = x(i) / total;
    T::copy(x, X);
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(text, HasSubstr("total = T.alloc_var(f32)\n"));
  EXPECT_THAT(text, HasSubstr(R"(    for i in T.serial(64):
      if x[i] > 1.0:
        total[0] = total[0] + x[i]
      else:
        if x[i] < -1.0:
          total[0] = total[0] - x[i]
        else:
          total[0] = T.max(total[0], 0.0)
)"));
}

TEST(BuilderTest, LoopsOfEveryKind) {
  T::ProgramBuilder p("k");
  auto X = p.tensor("X", {8, 8, 8}, T::f32);
  {
    T::Kernel kernel(1, 1, 1, {.threads = 64});
    auto [bx, by, bz] = kernel.block_index();
    auto t = T::alloc_fragment({8, 8, 8}, T::f32, "t");
    for (auto [a, b, c] : T::Parallel(8, 8, 8))
      t(a, b, c) = T::cast(a + b * c + bx + by + bz, T::f32);
    for (auto u : T::Unroll(2, 6, {.name = "u"})) t(0, 0, u) = 1.0;
    for (auto s : T::Pipelined(
             1, 4, {.num_stages = 2, .order = {0, 1}, .stage = {0, 1}})) {
      T::copy(X(s, 0, 0), t(T::slice(s, s + 1), T::all, T::all));
      T::copy(t(T::slice(s, s + 1), T::all, T::all), X(s, 0, 0));
    }
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(text,
              HasSubstr("with T.Kernel(1, 1, 1, threads=64) as (bx, by, bz):"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "for i in T.Parallel(8):\n      for j in T.Parallel(8):\n"
          "        for k in T.Parallel(8):\n"
          "          t[i, j, k] = T.cast(i + j * k + bx + by + bz, f32)"));
  EXPECT_THAT(text, HasSubstr("for u in T.unroll(2, 6):"));
  EXPECT_THAT(text, HasSubstr("for i in T.Pipelined(1, 4, num_stages=2, "
                              "order=[0, 1], stage=[0, 1]):"));
  EXPECT_THAT(text, HasSubstr("T.copy(X[i, 0:8, 0:8], t[i, 0:8, 0:8])"));
}

TEST(BuilderTest, ElementRefAssignmentRecordsAStore) {
  T::ProgramBuilder p("k");
  auto X = p.tensor("X", {4}, T::f16);
  {
    T::Kernel kernel(1);
    auto a = T::alloc_fragment({4}, T::f16, "a");
    auto b = T::alloc_fragment({4}, T::f32, "b");
    T::copy(X, a);
    for (auto i : T::Parallel(4))
      b(i) = a(i);  // BufferRef = BufferRef: a store, with a cast
    for (auto i : T::Parallel(4)) a(i) = b(i) * 2;
    T::copy(a, X);
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(text, HasSubstr("b[i] = T.cast(a[i], f32)"));
  EXPECT_THAT(text, HasSubstr("a[i] = T.cast(b[i] * 2.0, f16)"));
}

TEST(BuilderTest, AtomicsReductionsSyncAndAnnotations) {
  T::ProgramBuilder p("k");
  auto N = T::dim("N");
  auto X = p.tensor("X", {N, 32}, T::f32);
  auto S = p.tensor("S", {32}, T::f32);
  auto M = p.tensor("M", {1}, T::i32);
  {
    T::Kernel kernel(T::ceildiv(N, 16), {.threads = 256});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({16, 32}, T::f32, "x");
    auto col = T::alloc_fragment({32}, T::f32, "col");
    auto sh = T::alloc_shared({16, 32}, T::f32, "sh");
    auto bars = T::alloc_barrier({256}, "bars");
    T::annotate_layout(sh, T::make_swizzled_layout(sh, 128));
    T::use_swizzle(8, true);
    T::copy(X(bx * 16, 0), x);
    T::reduce_absmax(x, col, {.dim = 0, .clear = false});
    T::cumsum(x, {.dim = -1, .reverse = true});
    T::copy(x, sh);
    T::sync_threads();
    T::mbarrier_expect_tx(bars[0], 2048);
    T::mbarrier_arrive(bars[0]);
    T::mbarrier_wait_parity(bars[0], 0);
    T::atomic_add(S, col);
    T::atomic_max(M(0), bx);
    T::print(bx, "block");
    T::print(col);
  }
  std::string text = Print(p.finish());
  EXPECT_THAT(
      text,
      HasSubstr("def k(X: T.Tensor((N, 32), f32), S: T.Tensor((32,), f32), "
                "M: T.Tensor((1,), i32), *, N: i32):"));
  EXPECT_THAT(
      text,
      HasSubstr("bars = T.alloc_barrier(1)\n    T.mbarrier_init(bars, [256])"));
  EXPECT_THAT(text, HasSubstr("T.annotate_layout(sh, T.swizzled(128))"));
  EXPECT_THAT(text, HasSubstr("T.use_swizzle(panel_size=8, order=\"col\")"));
  EXPECT_THAT(text, HasSubstr("T.reduce_absmax(x, col, dim=0, clear=False)"));
  EXPECT_THAT(text, HasSubstr("T.cumsum(x, x, dim=1, reverse=True)"));
  EXPECT_THAT(text, HasSubstr("T.mbarrier_expect_tx(bars[0], 2048)"));
  EXPECT_THAT(text, HasSubstr("T.atomic_add(S, col)"));
  EXPECT_THAT(text, HasSubstr("T.atomic_max(M[0], bx)"));
  EXPECT_THAT(text, HasSubstr("T.print(bx, msg=\"block\")"));
}

TEST(BuilderTest, LocationsPointAtTheUserCode) {
  T::ProgramBuilder p("k");
  auto X = p.tensor("X", {16}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({16}, T::f32, "x");
    line = __LINE__ + 1;
    T::copy(X, x);
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  EXPECT_THAT(
      prog->to_string(/*locations=*/true),
      HasSubstr("T.copy(X, x)  # builder_test.cc:" + std::to_string(line)));
}

TEST(BuilderTest, ConstantsFoldAsTheyAreBuilt) {
  EXPECT_EQ(T::ceildiv(1000, 128).to_string(), "8");
  EXPECT_EQ((T::Expr(3) * 4 + 1).to_string(), "13");
  EXPECT_EQ(T::Expr(int64_t{1} << 40).dtype(), T::i64);
  EXPECT_EQ(T::Expr(2.5).dtype(), T::f32);
  EXPECT_EQ(T::Expr(true).dtype(), T::bool_);
  EXPECT_EQ((-T::infinity(T::f32)).to_string(), "-T.infinity(f32)");
  EXPECT_EQ(T::max_value(T::f16).to_string(), "T.f16(65504.0)");
  EXPECT_EQ(T::min_value(T::i8).to_string(), "T.i8(-128)");
}

// INT32_MIN / -1 used to fold silently to INT32_MIN (undefined on the GPU).
TEST(BuilderTest, SignedQuotientOverflowIsAnErrorAtTheNextOp) {
  const T::Expr lowest = std::numeric_limits<int32_t>::min();
  for (int op = 0; op < 3; ++op) {
    T::ProgramBuilder p("k");
    auto x = p.tensor("x", {4}, T::i32);
    {
      T::Kernel kernel(1);
      T::Expr q = op == 0   ? lowest / -1
                  : op == 1 ? lowest % -1
                            : T::ceildiv(lowest, -1);
      const int line = __LINE__ + 1;
      for (auto i : T::Parallel(4)) x(i) = q;
      absl::StatusOr<Program> prog = p.finish();
      EXPECT_EQ(prog.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(prog.status().message(),
                  HasSubstr(absl::StrCat("builder_test.cc:", line)));
      EXPECT_THAT(prog.status().message(), HasSubstr("-2147483648 "));
      EXPECT_THAT(prog.status().message(), HasSubstr(" -1 overflows"));
    }
  }
  // The same in i64, and quotients that fit still fold.
  const T::Expr lowest64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ((lowest64 / 1).to_string(), lowest64.to_string());
  EXPECT_EQ((lowest / 2).to_string(), "-1073741824");
  EXPECT_EQ(T::ceildiv(lowest64, 2).dtype(), T::i64);
  T::ProgramBuilder p("k64");
  auto y = p.tensor("y", {4}, T::i64);
  {
    T::Kernel kernel(1);
    for (auto i : T::Parallel(4)) y(i) = lowest64 / -1;
  }
  EXPECT_THAT(p.finish().status().message(),
              HasSubstr("-9223372036854775808 / -1 overflows"));
}

// swizzle_bytes = 7 used to be accepted.
TEST(BuilderTest, SwizzleBytesMustBeASwizzle) {
  for (int bytes : {7, 16, 256, -32}) {
    T::ProgramBuilder p("k");
    {
      T::Kernel kernel(1);
      auto s = T::alloc_shared({64, 64}, T::f16, "s");
      const int line = __LINE__ + 1;
      T::annotate_layout(s, T::make_swizzled_layout(s, bytes));
      absl::StatusOr<Program> prog = p.finish();
      EXPECT_EQ(prog.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(prog.status().message(),
                  HasSubstr(absl::StrCat("builder_test.cc:", line,
                                         ": annotate_layout: swizzle_bytes = ",
                                         bytes, " is not a swizzle")));
    }
  }
  for (int bytes : {0, 32, 64, 128}) {
    T::ProgramBuilder p("k");
    auto x = p.tensor("x", {64, 64}, T::f16);
    {
      T::Kernel kernel(1);
      auto s = T::alloc_shared({64, 64}, T::f16, "s");
      T::annotate_layout(s, T::make_swizzled_layout(s, bytes));
      T::copy(x, s);
    }
    EXPECT_TRUE(p.finish().ok()) << bytes;
  }
  T::ProgramBuilder p("k");
  {
    T::Kernel kernel(1);
    auto s = T::alloc_shared({64, 64}, T::f16, "s");
    T::annotate_layout(s,
                       T::LayoutSpec{.swizzled = false, .swizzle_bytes = 64});
  }
  EXPECT_THAT(p.finish().status().message(),
              HasSubstr("on a row-major layout"));
}

// Expressions need no builder; an op without one is an error (not a silent
// no-op) that the next finish() returns (stray_ops_test.cc), and no crash.
TEST(BuilderTest, NoBuilderMeansTheOpIsAnErrorAndNothingCrashes) {
  T::Expr e = T::Expr(1) + 2;
  EXPECT_EQ(e.to_string(), "3");
  T::Buffer undefined;
  T::copy(undefined, undefined);  // no builder alive: an error, reported next
  T::ProgramBuilder p("next");
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_THAT(prog.status().message(), HasSubstr("no live ProgramBuilder"));
}

TEST(BuilderTest, UndefinedBuffersAreErrorsNotCrashes) {
  T::ProgramBuilder p("k");
  {
    T::Kernel kernel(1);
    T::Buffer undefined;
    T::copy(undefined, undefined);
    T::reduce_sum(undefined, undefined);
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_EQ(prog.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(prog.status().message()),
              HasSubstr("undefined buffer"));
}

TEST(BuilderTest, UnboundSymbolicDimIsAnError) {
  T::ProgramBuilder p("k");
  auto N = T::dim("N");
  auto X = p.tensor("X", {16}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(N, 16));
    auto x = T::alloc_fragment({16}, T::f32, "x");
    T::copy(X, x);
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_THAT(
      std::string(prog.status().message()),
      HasSubstr("symbolic dimension N is not a dimension of any tensor"));
}

}  // namespace
}  // namespace tessel
