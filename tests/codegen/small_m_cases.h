// Small-M gemms (src/passes/small_m_gemm.h): programs whose accumulators
// have fewer rows than the block's tensor-core tile, as decode attention
// writes them, for the schedule / NVRTC tests and the GPU test.
//
//   SmallMGemmProgram({.m = 4, .transpose_b = true});  // C = A B^T
//   SmallMDecodeProgram({.m = 4});  // softmax(Q K^T) V of one KV block
#ifndef TESSEL_TESTS_CODEGEN_SMALL_M_CASES_H_
#define TESSEL_TESTS_CODEGEN_SMALL_M_CASES_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessel/builder.h"

namespace tessel::testing {

struct SmallMCase {
  int m = 4;
  int n = 64;
  int k = 128;
  bool transpose_b = false;
  DataType dtype = DataType::kF16;
  int threads = 128;
  int blocks = 2;  // along N (gemm) or along the batch (decode)
};

inline std::string SmallMName(const SmallMCase& c, const char* what) {
  return absl::StrCat(what, "_m", c.m, "_n", c.n, "_k", c.k,
                      c.transpose_b ? "_nt" : "_nn",
                      c.dtype == DataType::kBF16 ? "_bf16" : "_f16");
}

// C [m, n * blocks] (f32) = A [m, k] * B, B [k, n * blocks] or (transpose_b)
// [n * blocks, k]; K in two k tiles of k / 2 (the second adds to the first).
inline absl::StatusOr<Program> SmallMGemmProgram(const SmallMCase& c) {
  namespace T = tessel;
  const int N = c.n * c.blocks, bk = c.k / 2;
  T::ProgramBuilder p(SmallMName(c, "small_m_gemm"));
  auto A = p.tensor("A", {c.m, c.k}, c.dtype);
  auto B = c.transpose_b ? p.tensor("B", {N, c.k}, c.dtype)
                         : p.tensor("B", {c.k, N}, c.dtype);
  auto C = p.tensor("C", {c.m, N}, DataType::kF32);
  {
    T::Kernel kernel(c.blocks, {.threads = c.threads});
    auto [bx] = kernel.block_index();
    auto As = T::alloc_shared({c.m, bk}, c.dtype, "A_shared");
    auto Bs = c.transpose_b ? T::alloc_shared({c.n, bk}, c.dtype, "B_shared")
                            : T::alloc_shared({bk, c.n}, c.dtype, "B_shared");
    auto acc = T::alloc_fragment({c.m, c.n}, DataType::kF32, "acc");
    T::clear(acc);
    for (auto k : T::Serial(2)) {
      T::copy(A(0, k * bk), As);
      if (c.transpose_b) {
        T::copy(B(bx * c.n, k * bk), Bs);
      } else {
        T::copy(B(k * bk, bx * c.n), Bs);
      }
      T::gemm(As, Bs, acc, {.transpose_B = c.transpose_b});
    }
    T::copy(acc, C(0, bx * c.n));
  }
  return p.finish();
}

// One decode-attention block per batch entry b: S = Q K^T (Q [m, k] of
// batch b, K [n, k]: transpose_B), its row max and row sum (reduce_max,
// reduce_sum into [m] fragments), P = exp2(S - max) cast to the dtype in a
// fragment, O = (P V) * (1 / sum) by a row rescale inside a Parallel loop
// over [m, k], V [n, k]; O (f32) [blocks, m, k] and the row sums
// L [blocks, m].
inline absl::StatusOr<Program> SmallMDecodeProgram(const SmallMCase& c) {
  namespace T = tessel;
  const int m = c.m, n = c.n, d = c.k;
  T::ProgramBuilder p(SmallMName(c, "small_m_decode"));
  auto Q = p.tensor("Q", {c.blocks, m, d}, c.dtype);
  auto K = p.tensor("K", {c.blocks, n, d}, c.dtype);
  auto V = p.tensor("V", {c.blocks, n, d}, c.dtype);
  auto O = p.tensor("O", {c.blocks, m, d}, DataType::kF32);
  auto L = p.tensor("L", {c.blocks, m}, DataType::kF32);
  {
    T::Kernel kernel(c.blocks, {.threads = c.threads});
    auto [b] = kernel.block_index();
    auto Qs = T::alloc_shared({m, d}, c.dtype, "Q_shared");
    auto Ks = T::alloc_shared({n, d}, c.dtype, "K_shared");
    auto Vs = T::alloc_shared({n, d}, c.dtype, "V_shared");
    auto S = T::alloc_fragment({m, n}, DataType::kF32, "scores");
    auto P = T::alloc_fragment({m, n}, c.dtype, "probs");
    auto acc = T::alloc_fragment({m, d}, DataType::kF32, "acc_o");
    auto row_max = T::alloc_fragment({m}, DataType::kF32, "row_max");
    auto row_sum = T::alloc_fragment({m}, DataType::kF32, "row_sum");
    auto inv = T::alloc_fragment({m}, DataType::kF32, "inv_sum");
    T::copy(Q(b, 0, 0), Qs);
    T::copy(K(b, 0, 0), Ks);
    T::copy(V(b, 0, 0), Vs);
    T::clear(S);
    T::gemm(Qs, Ks, S, {.transpose_B = true});
    T::reduce_max(S, row_max);
    for (auto [i, j] : T::Parallel(m, n))
      S(i, j) = T::exp2((S(i, j) - row_max(i)) * 0.125);
    T::reduce_sum(S, row_sum);
    for (auto [i, j] : T::Parallel(m, n)) P(i, j) = S(i, j);
    T::clear(acc);
    T::gemm(P, Vs, acc);
    for (auto i : T::Parallel(m)) inv(i) = 1.0 / row_sum(i);
    for (auto [i, j] : T::Parallel(m, d)) acc(i, j) *= inv(i);
    T::copy(acc, O(b, 0, 0));
    T::copy(row_sum, L(b, 0));
  }
  return p.finish();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_SMALL_M_CASES_H_
