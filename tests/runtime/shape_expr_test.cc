// Tensor dims declared as expressions of symbolic sizes (K / 2,
// ceildiv(K, 128)): checked against the tensors passed, at launch and in
// the interpreter, with messages naming the tensor, the dim and both
// values; the declaration order of the tensors does not matter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessel/interpret.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

// Half[i] = X[2 i] (Half declared first: its K / 2 is bound by X's K) and
// Blocks[i] = 1 for each of the ceildiv(K, 128) blocks.
Program HalvesProgram() {
  T::ProgramBuilder p("halves");
  auto K = p.dim("K");
  auto Half = p.tensor("Half", {K / 2}, T::f32);
  auto X = p.tensor("X", {K}, T::f32);
  auto Blocks = p.tensor("Blocks", {T::ceildiv(K, 128)}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(K, 128), {.threads = 128});
    auto [bx] = kernel.block_index();
    for (auto i : T::Parallel(64)) {
      T::If(bx * 64 + i < K / 2,
            [&] { Half(bx * 64 + i) = X((bx * 64 + i) * 2); });
    }
    Blocks(bx) = 1.0f;
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

TensorView View(HostTensor& t) {
  return TensorView::Contiguous(t.data(), t.dtype(), t.shape());
}

TEST(ShapeExpressions, MatchingTensorsRun) {
  Program prog = HalvesProgram();
  HostTensor half(f32, {150}), x(f32, {300}), blocks(f32, {3});
  for (int i = 0; i < 300; ++i) x.set_flat(i, i);
  absl::StatusOr<CompiledKernel> k = compile(prog, {.target = Target::cpu()});
  ASSERT_TRUE(k.ok()) << k.status();
  absl::Status s = k->launch({View(half), View(x), View(blocks)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(half.get_flat(149), 298);
  EXPECT_EQ(blocks.get_flat(2), 1);
}

TEST(ShapeExpressions, ALaunchNamesTheTensorTheDimAndBothValues) {
  Program prog = HalvesProgram();
  HostTensor half(f32, {151}), x(f32, {300}), blocks(f32, {3});
  absl::StatusOr<CompiledKernel> k = compile(prog, {.target = Target::cpu()});
  ASSERT_TRUE(k.ok()) << k.status();
  absl::Status s = k->launch({View(half), View(x), View(blocks)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Half"));
  EXPECT_THAT(s.message(), HasSubstr("dimension 0 is 151, but K / 2 = 150"));
  EXPECT_THAT(s.message(), HasSubstr("K = 300"));

  HostTensor half2(f32, {150}), blocks4(f32, {4});
  s = k->launch({View(half2), View(x), View(blocks4)});
  EXPECT_THAT(s.message(), HasSubstr("Blocks"));
  EXPECT_THAT(s.message(), HasSubstr("dimension 0 is 4, but"));
  EXPECT_THAT(s.message(), HasSubstr("= 3 (K = 300)"));
}

TEST(ShapeExpressions, TheInterpreterChecksThemToo) {
  Program prog = HalvesProgram();
  HostTensor half(f32, {149}), x(f32, {300}), blocks(f32, {3});
  absl::Status s = interpret(prog, {&half, &x, &blocks});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'Half'"));
  EXPECT_THAT(s.message(), HasSubstr("expected f32[K / 2]"));
  EXPECT_THAT(s.message(), HasSubstr("dimension 0 must be 150"));
}

TEST(ShapeExpressions, CompileForTheGpuTargets) {
  Program prog = HalvesProgram();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(prog, {.target = t});
    EXPECT_TRUE(k.ok()) << k.status();
  }
}

TEST(ShapeExpressions, AnExpressionOfOtherThanSizesIsRefused) {
  T::ProgramBuilder p("bad");
  auto K = p.dim("K");
  auto X = p.tensor("X", {K}, T::f32);
  auto Y = p.tensor("Y", {K * 2.0f}, T::f32);
  (void)X;
  (void)Y;
  absl::Status s = p.finish().status();
  EXPECT_THAT(s.message(), HasSubstr("integer expression of T::dims"));
}

}  // namespace
}  // namespace tessel
