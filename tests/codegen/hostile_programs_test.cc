// Small hostile programs in the spirit of a random program generator:
// nested Parallel loops, fragments of odd sizes, reductions along dim 0 and
// dim 1, cumsum, atomics, copies of ragged slices. Each one either runs on
// the interpreter and compiles for sm_90a, or both targets refuse it alike
// (agreement.h).
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessel/tessel.h"
#include "tests/codegen/agreement.h"

namespace tessel {
namespace {

namespace T = tessel;
using agreement::ExpectBothTargetsAccept;

TEST(HostileProgramsTest, NestedParallelLoopsInASerialLoop) {
  T::ProgramBuilder p("nested_parallel");
  auto X = p.tensor("X", {8, 24}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 96});
    auto x = T::alloc_fragment({8, 24}, T::f32, "x");
    T::copy(X(0, 0), x);
    for (auto k : T::Serial(3)) {
      for (auto i : T::Parallel(8)) {
        for (auto j : T::Parallel(24)) {
          x(i, j) = x(i, j) + T::cast(k * i - j, T::f32);
        }
      }
    }
    T::copy(x, X(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// Odd fragment sizes, reduced along both dims and broadcast back.
TEST(HostileProgramsTest, OddTileReducedAlongBothDims) {
  for (int threads : {32, 128}) {
    T::ProgramBuilder p("odd_reduce");
    auto X = p.tensor("X", {7, 13}, T::f32);
    {
      T::Kernel kernel(1, {.threads = threads});
      auto x = T::alloc_fragment({7, 13}, T::f32, "x");
      auto row = T::alloc_fragment({7}, T::f32, "row");
      auto col = T::alloc_fragment({13}, T::f32, "col");
      T::copy(X(0, 0), x);
      T::reduce_sum(x, row, {.dim = 1});
      T::reduce_max(x, col, {.dim = 0});
      for (auto [i, j] : T::Parallel(7, 13)) {
        x(i, j) = x(i, j) - row(i) + col(j);
      }
      T::copy(x, X(0, 0));
    }
    ExpectBothTargetsAccept(p.finish());
  }
}

// Column statistics of a gemm accumulator, and its row sums.
TEST(HostileProgramsTest, GemmAccumulatorReducedAlongBothDims) {
  T::ProgramBuilder p("gemm_stats");
  auto A = p.tensor("A", {64, 32}, T::f16);
  auto C = p.tensor("C", {64, 64}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto a = T::alloc_shared({64, 32}, T::f16, "a");
    auto b = T::alloc_shared({32, 64}, T::f16, "b");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    auto rows = T::alloc_fragment({64}, T::f32, "rows");
    auto cols = T::alloc_fragment({64}, T::f32, "cols");
    T::copy(A(0, 0), a);
    T::copy(A(0, 0), b);
    T::gemm(a, b, acc, {.clear_accum = true});
    T::reduce_sum(acc, rows, {.dim = 1});
    T::reduce_max(acc, cols, {.dim = 0});
    for (auto [i, j] : T::Parallel(64, 64)) {
      acc(i, j) = acc(i, j) * rows(i) - cols(j);
    }
    T::copy(acc, C(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

TEST(HostileProgramsTest, CumsumOfOddFragmentsBothDims) {
  T::ProgramBuilder p("odd_cumsum");
  auto X = p.tensor("X", {5, 9}, T::f32);
  auto Y = p.tensor("Y", {5, 9}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto x = T::alloc_fragment({5, 9}, T::f32, "x");
    auto y = T::alloc_fragment({5, 9}, T::f32, "y");
    T::copy(X(0, 0), x);
    T::cumsum(x, y, {.dim = 0});
    T::cumsum(y, {.dim = 1, .reverse = true});
    T::copy(y, Y(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// A tile added past the tensor's edge, and element atomics of a loop.
TEST(HostileProgramsTest, AtomicsOfRaggedTilesAndElements) {
  T::ProgramBuilder p("ragged_atomics");
  auto X = p.tensor("X", {7, 13}, T::f32);
  auto Y = p.tensor("Y", {9, 17}, T::f32);
  auto M = p.tensor("M", {13}, T::i32);
  {
    T::Kernel kernel(2, {.threads = 64});
    auto x = T::alloc_fragment({7, 13}, T::f32, "x");
    T::copy(X(0, 0), x);
    T::atomic_add(Y(3, 5), x);
    for (auto [i, j] : T::Parallel(7, 13)) {
      T::atomic_max(M(j), T::cast(x(i, j), T::i32) + i);
    }
  }
  ExpectBothTargetsAccept(p.finish());
}

// Slices that start inside the tensor and run past its edge, into part of
// a shared tile, then a fragment stored past the edge.
TEST(HostileProgramsTest, CopiesOfRaggedSlices) {
  T::ProgramBuilder p("ragged_copies");
  auto X = p.tensor("X", {10, 20}, T::f16);
  auto Y = p.tensor("Y", {10, 20}, T::f16);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto s = T::alloc_shared({8, 16}, T::f16, "s");
    auto f = T::alloc_fragment({8, 16}, T::f32, "f");
    T::fill(s, 0);
    T::copy(X(T::slice(3, 10), T::slice(5, 20)),
            s(T::slice(0, 7), T::slice(0, 15)));
    T::copy(s, f);
    T::copy(f, Y(5, 9));
  }
  ExpectBothTargetsAccept(p.finish());
}

// A row read reversed: any thread may need any element.
TEST(HostileProgramsTest, ReversedRead) {
  T::ProgramBuilder p("reversed_read");
  auto X = p.tensor("X", {16, 32}, T::f32);
  auto Y = p.tensor("Y", {16, 32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({16, 32}, T::f32, "x");
    auto y = T::alloc_fragment({16, 32}, T::f32, "y");
    T::copy(X(0, 0), x);
    for (auto [i, j] : T::Parallel(16, 32)) y(i, j) = x(i, 31 - j);
    T::copy(y, Y(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// Fragments stored at other indices than the loop's variables: every thread
// runs every iteration in order on replicated tiles, as the interpreter does.
TEST(HostileProgramsTest, StoreAtAReversedIndex) {
  T::ProgramBuilder p("reversed_store");
  auto X = p.tensor("X", {16, 32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({16, 32}, T::f32, "x");
    auto y = T::alloc_fragment({16, 32}, T::f32, "y");
    T::copy(X(0, 0), x);
    for (auto [i, j] : T::Parallel(16, 32)) y(i, 31 - j) = x(i, j);
    T::copy(y, X(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// The interpreter's order, on the GPU too: each thread sums every element.
TEST(HostileProgramsTest, SumIntoOneElementInAParallelLoop) {
  T::ProgramBuilder p("parallel_sum");
  auto X = p.tensor("X", {32}, T::f32);
  auto S = p.tensor("S", {1}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({32}, T::f32, "x");
    auto s = T::alloc_fragment({1}, T::f32, "s");
    T::copy(X(0), x);
    T::fill(s, 0);
    for (auto i : T::Parallel(32)) s(0) = s(0) + x(i);
    T::copy(s, S(0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// A column written over the rows (x(i, 0)), read under a T::If.
TEST(HostileProgramsTest, ColumnStoredOverTheRows) {
  T::ProgramBuilder p("column_store");
  auto X = p.tensor("X", {8, 24}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto x = T::alloc_fragment({8, 24}, T::f32, "x");
    T::copy(X(0, 0), x);
    for (auto i : T::Parallel(8)) {
      T::If(x(i, 0) > 0.5f, [&] { x(i, 0) = T::exp2(x(i, 0)); }).Else([&] {
        x(i, 0) = T::abs(x(i, 0));
      });
    }
    auto r = T::alloc_fragment({8}, T::f32, "r");
    T::reduce_sum(x, r, {.dim = 1});
    for (auto [i, j] : T::Parallel(8, 24)) x(i, j) = x(i, j) - r(i);
    T::copy(x, X(0, 0));
  }
  ExpectBothTargetsAccept(p.finish());
}

// Names go into the generated CUDA: ones the translation unit declares or
// reserves (__syncthreads, uint32_t, half2, and, ...) and a program name with
// a newline, a quote and a NUL byte (written into a comment) once made code
// NVRTC refused ("a tessel bug").
TEST(HostileProgramsTest, NamesThatClashWithCuda) {
  const std::vector<std::string> names = {
      "__syncthreads", "__half",     "_Bool",       "uint32_t", "int64_t",
      "size_t",        "half2",      "nv_bfloat16", "int4",     "float3",
      "CUtensorMap",   "tessel",     "and",         "not",      "constexpr",
      "decltype",      "NULL",       "INFINITY",    "uint",     "cudaStream_t",
      "__nv_bfloat16", "__shfl_sync"};
  T::ProgramBuilder p(std::string("we ird\n\"name\\\0 */", 17));
  std::vector<T::Buffer> tensors;
  for (const std::string& n : names)
    tensors.push_back(p.tensor(n, {64}, T::f32));
  {
    T::Kernel kernel(1, {.threads = 64});
    for (size_t i = 0; i < names.size(); ++i) {
      auto t = T::alloc_fragment({64}, T::f32, names[(i + 1) % names.size()]);
      T::copy(tensors[i], t);
      for (auto j : T::Parallel(64)) t(j) = t(j) * 2.0f;
      T::copy(t, tensors[i]);
    }
  }
  ExpectBothTargetsAccept(p.finish());
}

}  // namespace
}  // namespace tessel
