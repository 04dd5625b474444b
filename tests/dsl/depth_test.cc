// Nesting depth: finish() refuses expressions and statements deeper than its
// limits, naming the user's line (10,000 nested adds used to crash the CPU
// compile, 100,000 Program::to_string()); at the limits every stage that
// walks the IR by recursion runs (also under ASan's larger frames).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "jit/nvrtc.h"
#include "src/dsl/depth_limit.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

constexpr int kStoreLine = __LINE__ + 14;  // the store below

// y(i) = x(i) + x(i) + ... with `adds` additions: an expression whose
// deepest path has adds + 2 nodes (the adds, the first load, its index).
absl::StatusOr<Program> DeepSum(int adds) {
  T::ProgramBuilder p("deep_sum");
  auto x = p.tensor("x", {32}, T::f32);
  auto y = p.tensor("y", {32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    for (auto i : T::Parallel(32)) {
      T::Expr e = x(i);
      for (int k = 0; k < adds; ++k) e = e + x(i);
      // The line kStoreLine names:
      y(i) = e;
    }
  }
  return p.finish();
}

// `depth` loops, each inside the previous, around one store.
absl::StatusOr<Program> DeepLoops(int depth) {
  T::ProgramBuilder p("deep_loops");
  auto y = p.tensor("y", {1}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    std::function<void(int)> nest = [&](int d) {
      if (d == 0) {
        y(0) = y(0) + 1.0f;
        return;
      }
      for (auto k : T::Serial(1)) {
        (void)k;
        nest(d - 1);
      }
    };
    nest(depth);
  }
  return p.finish();
}

TEST(DepthTest, TooDeepExpressionsAreRefusedAtTheirLine) {
  // 100,000: also freed without recursing (ir::Expr's release loop).
  for (int adds : {dsl::kMaxExprDepth - 1, 10000, 100000}) {
    absl::StatusOr<Program> p = DeepSum(adds);
    ASSERT_FALSE(p.ok()) << adds;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(),
                HasSubstr(absl::StrCat("depth_test.cc:", kStoreLine, ": ")));
    EXPECT_THAT(p.status().message(),
                HasSubstr(absl::StrCat("nested more than ", dsl::kMaxExprDepth,
                                       " operators deep")));
  }
}

TEST(DepthTest, ExpressionsAtTheLimitPassEveryStage) {
  const int adds = dsl::kMaxExprDepth - 2;
  absl::StatusOr<Program> p = DeepSum(adds);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->to_string(), HasSubstr("x[i] + x[i]"));
  EXPECT_NE(p->hash(), 0u);
  EXPECT_TRUE(*p == *DeepSum(adds));
  // The interpreter computes it.
  absl::StatusOr<CompiledKernel> cpu = compile(*p, {.target = Target::cpu()});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  HostTensor x(DataType::kF32, {32}), y(DataType::kF32, {32});
  x.fill(1.0);
  ASSERT_TRUE(cpu->launch({TensorView::Contiguous(x.data(), T::f32, {32}),
                           TensorView::Contiguous(y.data(), T::f32, {32})})
                  .ok());
  EXPECT_EQ(y.get_flat(31), adds + 1);
  // The passes and codegen lower it, NVRTC compiles it.
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<jit::Cubin> cubin =
      jit::Compile(lowered->generated.source, lowered->jit_options);
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

TEST(DepthTest, TooDeepStatementsAreRefused) {
  absl::StatusOr<Program> p = DeepLoops(dsl::kMaxStmtDepth + 1);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("depth_test.cc:"));
  EXPECT_THAT(p.status().message(),
              HasSubstr(absl::StrCat("statements nested more than ",
                                     dsl::kMaxStmtDepth, " deep")));
}

TEST(DepthTest, StatementsAtTheLimitPassEveryStage) {
  // The kernel, and its loops up to the limit.
  absl::StatusOr<Program> p = DeepLoops(dsl::kMaxStmtDepth - 4);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->to_string().empty());
  absl::StatusOr<CompiledKernel> cpu = compile(*p, {.target = Target::cpu()});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  HostTensor y(DataType::kF32, {1});
  ASSERT_TRUE(
      cpu->launch({TensorView::Contiguous(y.data(), T::f32, {1})}).ok());
  EXPECT_GE(y.get_flat(0), 1.0);
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<jit::Cubin> cubin =
      jit::Compile(lowered->generated.source, lowered->jit_options);
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

}  // namespace
}  // namespace tessel
