// Programs the CPU target ran but the sm_90a lowering once refused (or
// crashed on), and small hostile programs in the spirit of a random program
// generator: each either runs on the interpreter and compiles for sm_90a
// (lowering, codegen, NVRTC; no GPU needed), or both targets refuse it with
// the same Status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/codegen/agreement.h"

namespace tessel {
namespace {

namespace T = tessel;
using agreement::ExpectBothTargetsAccept;

// A bias added to a gemm's accumulator, read at an offset (variant 2: bias_f
// [256] read at j + 128) or as it is (0), or rewritten first (1). Read at an
// offset, any thread may need any element: bias_f is replicated.
absl::StatusOr<Program> GemmBiasProgram(int variant) {
  T::ProgramBuilder p("gemm_bias");
  auto A = p.tensor("A", {128, 64}, T::f16);
  auto B = p.tensor("B", {64, 128}, T::f16);
  auto Bias = p.tensor("Bias", {256}, T::f32);
  auto C = p.tensor("C", {128, 128}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto a = T::alloc_shared({128, 64}, T::f16, "a");
    auto b = T::alloc_shared({64, 128}, T::f16, "b");
    auto acc = T::alloc_fragment({128, 128}, T::f32, "acc");
    auto bias_f =
        T::alloc_fragment({variant == 2 ? 256 : 128}, T::f32, "bias_f");
    T::copy(A(0, 0), a);
    T::copy(B(0, 0), b);
    T::copy(Bias(0), bias_f);
    if (variant == 1) {
      for (auto j : T::Parallel(128)) bias_f(j) = bias_f(j) * 2;
    }
    T::gemm(a, b, acc, {.clear_accum = true});
    for (auto [i, j] : T::Parallel(128, 128)) {
      acc(i, j) = acc(i, j) + (variant == 2 ? bias_f(j + 128) : bias_f(j));
    }
    T::copy(acc, C(0, 0));
  }
  return p.finish();
}

TEST(LayoutAgreementTest, BiasBroadcastIntoAGemmAccumulator) {
  for (int v : {0, 1, 2}) {
    SCOPED_TRACE(v);
    ExpectBothTargetsAccept(GemmBiasProgram(v));
  }
}

// A bias vector in registers added to a tile in shared memory: no fragment
// lays the loop out, so its threads follow their own spread and every
// thread holds the vector (the random staged programs found a blocked
// vector refused there; a column vector along the rows too).
TEST(LayoutAgreementTest, BiasBroadcastOverASharedTile) {
  for (bool along_rows : {false, true}) {
    SCOPED_TRACE(along_rows);
    T::ProgramBuilder p("bias_shared");
    auto X = p.tensor("X", {4, 16}, T::f32);
    auto Bias = p.tensor("Bias", {along_rows ? 4 : 16}, T::f32);
    auto Y = p.tensor("Y", {4, 16}, T::f32);
    {
      T::Kernel kernel(1, {.threads = 256});
      auto xs = T::alloc_shared({4, 16}, T::f32, "xs");
      auto ys = T::alloc_shared({4, 16}, T::f32, "ys");
      auto bias = T::alloc_fragment({along_rows ? 4 : 16}, T::f32, "bias");
      T::copy(X(0, 0), xs);
      T::copy(Bias(0), bias);
      for (auto [i, j] : T::Parallel(4, 16))
        ys(i, j) = xs(i, j) + (along_rows ? bias(i) : bias(j));
      T::copy(ys, Y(0, 0));
    }
    ExpectBothTargetsAccept(p.finish());
  }
}

// A fragment allocated inside the loop body: one per iteration, a local
// array of the thread that runs it.
TEST(LayoutAgreementTest, FragmentAllocatedInsideAParallelLoop) {
  T::ProgramBuilder p("frag_in_parallel");
  auto X = p.tensor("X", {16, 32}, T::f32);
  auto Y = p.tensor("Y", {16, 32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({16, 32}, T::f32, "x");
    T::copy(X(0, 0), x);
    for (auto [i, j] : T::Parallel(16, 32)) {
      auto tmp = T::alloc_fragment({2}, T::f32, "tmp");
      tmp(0) = x(i, j) * 2;
      tmp(1) = tmp(0) + 1;
      x(i, j) = tmp(1);
    }
    T::copy(x, Y(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// A rank-1 tile reduced into one element (the lowering once indexed the
// source with two indices and crashed).
TEST(ReduceAgreementTest, RankOneTileIntoOneElement) {
  for (int n : {16, 13}) {
    T::ProgramBuilder p("reduce_1d");
    auto X = p.tensor("X", {n}, T::f32);
    auto S = p.tensor("S", {2}, T::f32);
    {
      T::Kernel kernel(1, {.threads = 64});
      auto t = T::alloc_fragment({n}, T::f32, "t");
      auto sum = T::alloc_fragment({1}, T::f32, "sum");
      auto mx = T::alloc_fragment({1}, T::f32, "mx");
      T::copy(X(0), t);
      T::reduce_sum(t, sum, {.dim = 0});
      T::reduce_max(t, mx, {.dim = 0});
      T::copy(sum, S(0));
      T::copy(mx, S(1));
    }
    ExpectBothTargetsAccept(p.finish());
  }
}

// Kernels are extern "C": a program named as a CUDA math function once
// clashed with it in NVRTC's translation unit.
TEST(NamingAgreementTest, ProgramsNamedAsCudaFunctions) {
  for (const char* name : {"round", "exp2f", "sqrt", "malloc"}) {
    T::ProgramBuilder p(name);
    auto X = p.tensor("X", {8}, T::f32);
    {
      T::Kernel kernel(1);
      auto x = T::alloc_fragment({8}, T::f32, "fabs");
      T::copy(X(0), x);
      for (auto i : T::Parallel(8)) x(i) = T::exp2(x(i)) + T::sqrt(x(i));
      T::copy(x, X(0));
    }
    ExpectBothTargetsAccept(p.finish());
  }
}

// T.print of a whole buffer (fragment, shared, global) prints on the GPU
// too: one line per element, by the thread holding it.
TEST(PrintAgreementTest, WholeBuffers) {
  T::ProgramBuilder p("print_buffers");
  auto X = p.tensor("X", {4, 6}, T::f32);
  {
    T::Kernel kernel(2, {.threads = 32});
    auto f = T::alloc_fragment({4, 6}, T::f32, "f");
    auto s = T::alloc_shared({4, 6}, T::f16, "s");
    T::copy(X(0, 0), f);
    T::copy(f, s);
    T::print(f, "fragment");
    T::print(s, "shared");
    T::print(X, "global");
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  std::ostringstream out;
  HostTensor x(f32, {4, 6});
  ASSERT_TRUE(interpret(*prog, {&x}, {.print = &out}).ok());
  EXPECT_THAT(out.str(), ::testing::HasSubstr("shared: s[4, 6] = 0"));
  ExpectBothTargetsAccept(prog);
}

}  // namespace
}  // namespace tessel
