// Programs with 1-D fragments broadcast over a 2-D one in a Parallel loop
// (layout_inference/fragment_layouts.cc: kMmaCols / kRowCols / replicated): a
// GEMM with a bias + ReLU epilogue over its mma / wgmma accumulator, and a
// column max (reduce over dim 0) of a row-reduced tile used in a later Parallel
// loop.
//
//   absl::StatusOr<tessel::Program> p = GemmBiasReluProgram(128, 128, 64);
#ifndef TESSEL_TESTS_CODEGEN_BROADCAST_CASES_H_
#define TESSEL_TESTS_CODEGEN_BROADCAST_CASES_H_

#include "tessel/builder.h"

namespace tessel::testing {

// C = relu(A B + bias[j]), 128 x 128 tiles, 128 threads; A [M, K], B [K, N]
// f16, bias [N] f16, C [M, N] f32.
inline absl::StatusOr<Program> GemmBiasReluProgram(int M, int N, int K) {
  namespace T = tessel;
  constexpr int bm = 128, bn = 128, bk = 32;
  T::ProgramBuilder p("gemm_bias_relu");
  auto A = p.tensor("A", {M, K}, DataType::kF16);
  auto B = p.tensor("B", {K, N}, DataType::kF16);
  auto Bias = p.tensor("bias", {N}, DataType::kF16);
  auto C = p.tensor("C", {M, N}, DataType::kF32);
  {
    T::Kernel kernel(T::ceildiv(N, bn), T::ceildiv(M, bm), {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({bm, bk}, DataType::kF16, "As");
    auto Bs = T::alloc_shared({bk, bn}, DataType::kF16, "Bs");
    auto acc = T::alloc_fragment({bm, bn}, DataType::kF32, "acc");
    auto bias = T::alloc_fragment({bn}, DataType::kF32, "bias_f");
    T::clear(acc);
    for (auto k : T::Pipelined(T::ceildiv(K, bk), {.num_stages = 2})) {
      T::copy(A(by * bm, k * bk), As);
      T::copy(B(k * bk, bx * bn), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(Bias(bx * bn), bias);
    for (auto [i, j] : T::Parallel(bm, bn))
      acc(i, j) = T::max(acc(i, j) + bias(j), 0.0f);
    T::copy(acc, C(by * bm, bx * bn));
  }
  return p.finish();
}

// Per block of 8 rows: m[j] = max_i X[i, j], r[i] = sum_j X[i, j], and
// Y = X - m[j] + r[i]; X [M, N] f16, Y [M, N] f32.
inline absl::StatusOr<Program> ColumnMaxProgram(int M, int N) {
  namespace T = tessel;
  constexpr int bm = 8;
  T::ProgramBuilder p("column_max");
  auto X = p.tensor("X", {M, N}, DataType::kF16);
  auto Y = p.tensor("Y", {M, N}, DataType::kF32);
  {
    T::Kernel kernel(T::ceildiv(M, bm), {.threads = 128});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({bm, N}, DataType::kF32, "x");
    auto m = T::alloc_fragment({N}, DataType::kF32, "m");
    auto r = T::alloc_fragment({bm}, DataType::kF32, "r");
    T::copy(X(bx * bm, 0), x);
    T::reduce_sum(x, r, {.dim = 1});
    T::reduce_max(x, m, {.dim = 0});
    for (auto [i, j] : T::Parallel(bm, N)) x(i, j) = x(i, j) - m(j) + r(i);
    T::copy(x, Y(bx * bm, 0));
  }
  return p.finish();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_BROADCAST_CASES_H_
