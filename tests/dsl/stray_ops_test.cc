// Ops that no builder can take are errors, not silent no-ops: recorded with
// no live ProgramBuilder, or on another thread than the builder's, they make
// the next finish() fail naming the op's line. An element reference kept in
// a variable cannot be assigned (it would store into the buffer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

std::string Here(int line) { return absl::StrCat("stray_ops_test.cc:", line); }

absl::StatusOr<Program> SmallProgram() {
  T::ProgramBuilder p("small");
  auto X = p.tensor("X", {32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({32}, T::f32, "x");
    T::copy(X(0), x);
    T::copy(x, X(0));
  }
  return p.finish();
}

TEST(StrayOps, OpWithNoLiveBuilderFailsTheNextFinish) {
  Buffer tile;
  {
    T::ProgramBuilder p("gone");
    auto X = p.tensor("X", {32}, T::f32);
    tile = X;
  }  // the builder is gone: the copy below has nowhere to go
  const int line = __LINE__ + 1;
  T::copy(tile, tile);
  absl::StatusOr<Program> next = SmallProgram();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(next.status().message(), HasSubstr(Here(line)));
  EXPECT_THAT(next.status().message(), HasSubstr("no live ProgramBuilder"));
  // Reported once: the program after it builds.
  EXPECT_TRUE(SmallProgram().ok());
}

TEST(StrayOps, OpFromAnotherThreadFailsTheBuildersFinish) {
  T::ProgramBuilder p("threads");
  auto X = p.tensor("X", {32}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({32}, T::f32, "x");
    T::copy(X(0), x);
    std::thread other([&] {
      line = __LINE__ + 1;
      T::fill(x, 0.0);
    });
    other.join();
    T::copy(x, X(0));
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr(Here(line)));
  EXPECT_THAT(program.status().message(), HasSubstr("another thread"));
}

TEST(StrayOps, StoreAndScopesWithNoBuilderAreErrorsToo) {
  Buffer tile;
  {
    T::ProgramBuilder p("gone");
    tile = p.tensor("X", {32}, T::f32);
  }
  const int line = __LINE__ + 1;
  tile(0) = 1.0f;
  absl::StatusOr<Program> next = SmallProgram();
  ASSERT_FALSE(next.ok());
  EXPECT_THAT(next.status().message(), HasSubstr(Here(line)));
  EXPECT_THAT(next.status().message(), HasSubstr("store to X"));

  const int kernel_line = __LINE__ + 1;
  { T::Kernel kernel(1); }
  next = SmallProgram();
  ASSERT_FALSE(next.ok());
  EXPECT_THAT(next.status().message(), HasSubstr(Here(kernel_line)));
}

// `auto v = X(i); v = v * 2;` would store into X: assigning a named element
// reference does not compile; X(i) = ... and a T::alloc_var variable do.
static_assert(!std::is_assignable_v<BufferRef&, Expr>);
static_assert(!std::is_assignable_v<BufferRef&, const BufferRef&>);
static_assert(!std::is_assignable_v<BufferRef&, float>);
static_assert(std::is_assignable_v<BufferRef, Expr>);  // X(i) = v
static_assert(std::is_assignable_v<BufferRef, const BufferRef&>);
static_assert(std::is_assignable_v<ScalarVar&, Expr>);  // s = v
static_assert(std::is_assignable_v<ScalarVar&, float>);
static_assert(std::is_assignable_v<ScalarVar&, const BufferRef&>);

TEST(StrayOps, ElementReferencesStoreThroughTheCallOnly) {
  T::ProgramBuilder p("refs");
  auto X = p.tensor("X", {32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    auto s = T::alloc_var(T::f32, "s");
    s = 0;
    for (auto i : T::Serial(32)) {
      T::Expr v = X(i);  // a value: rebinding it records nothing
      v = v * 2;
      s += v;
      X(i) = s;
    }
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
}

}  // namespace
}  // namespace tessel
