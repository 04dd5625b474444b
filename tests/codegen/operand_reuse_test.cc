// Gemm operands kept in registers between gemms (src/passes/operand_reuse):
// two gemms reading the same shared tile in the same role load its
// fragments once; a write to the tile between them, another region of it,
// or a different role keeps both loads. The GPU numerics are the linear
// attention cases of tessel_seed_gpu_test and the samples' --check.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tessel/compile.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;

enum class Between { kNothing, kWriteToShared, kOtherStage };

// C1 = X Y1, C2 = X Y2 (X shared in role A), or, with x_as_b, C1 = Y1 X and
// C2 = Y2 X (role B). X is [2, 64, 64]: two stages of a 64 x 64 tile.
absl::StatusOr<Program> TwoGemms(bool x_as_b, Between between) {
  T::ProgramBuilder p("two_gemms");
  auto X = p.tensor("X", {64, 64}, T::f16);
  auto Y = p.tensor("Y", {64, 64}, T::f16);
  auto O = p.tensor("O", {64, 64}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_shared({2, 64, 64}, T::f16, "x");
    auto y = T::alloc_shared({64, 64}, T::f16, "y");
    auto c1 = T::alloc_fragment({64, 64}, T::f32, "c1");
    auto c2 = T::alloc_fragment({64, 64}, T::f32, "c2");
    T::copy(X(0, 0), x(0, T::slice(0, 64), T::slice(0, 64)));
    T::copy(X(0, 0), x(1, T::slice(0, 64), T::slice(0, 64)));
    T::copy(Y(0, 0), y);
    auto stage = [&](int s) { return x(s, T::slice(0, 64), T::slice(0, 64)); };
    const int second = between == Between::kOtherStage ? 1 : 0;
    if (x_as_b) {
      T::gemm(y, stage(0), c1, {.clear_accum = true});
    } else {
      T::gemm(stage(0), y, c1, {.clear_accum = true});
    }
    if (between == Between::kWriteToShared) T::copy(Y(0, 0), stage(0));
    if (x_as_b) {
      T::gemm(y, stage(second), c2, {.clear_accum = true});
    } else {
      T::gemm(stage(second), y, c2, {.clear_accum = true});
    }
    for (auto [i, j] : T::Parallel(64, 64)) c1(i, j) = c1(i, j) + c2(i, j);
    T::copy(c1, O(0, 0));
  }
  return p.finish();
}

std::string Source(bool x_as_b, Between between) {
  absl::StatusOr<Program> p = TwoGemms(x_as_b, between);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  // mma.sync: with wgmma, B is never loaded into registers.
  absl::StatusOr<CompiledKernel> k = compile(
      *p, {.target = Target::sm90a(), .pass_config = {.disable_wgmma = true}});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? k->source() : "";
}

// ldmatrix statements whose shared address is x's.
int LoadsOfX(const std::string& source) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    if (absl::StrContains(line, "ldmatrix") &&
        absl::StrContains(line, "(x_addr"))
      ++n;
  }
  return n;
}

// Checks booleans and counts rather than whole sources: a failure prints
// one line, not two kernels.
TEST(OperandReuse, SharedOperandLoadsOnce) {
  for (bool as_b : {false, true}) {
    SCOPED_TRACE(as_b ? "x as B" : "x as A");
    const char* keep = as_b ? "b_keep" : "a_keep";
    const std::string kept = Source(as_b, Between::kNothing);
    const std::string loaded_twice = Source(as_b, Between::kOtherStage);
    EXPECT_TRUE(absl::StrContains(kept, keep));
    EXPECT_FALSE(absl::StrContains(loaded_twice, keep));
    ASSERT_GT(LoadsOfX(kept), 0);
    EXPECT_EQ(2 * LoadsOfX(kept), LoadsOfX(loaded_twice));
  }
}

TEST(OperandReuse, AWriteBetweenTheGemmsLoadsAgain) {
  for (bool as_b : {false, true}) {
    SCOPED_TRACE(as_b ? "x as B" : "x as A");
    // y, the other operand, is still kept; x is loaded by both gemms.
    EXPECT_EQ(LoadsOfX(Source(as_b, Between::kWriteToShared)),
              LoadsOfX(Source(as_b, Between::kOtherStage)));
  }
}

}  // namespace
}  // namespace tessel
