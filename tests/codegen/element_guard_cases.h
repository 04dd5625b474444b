// Programs whose global element accesses reach past a tensor's edge (the
// boundary rule of docs/ir.md: a load there reads 0, a store or element
// atomic there is skipped), and one whose accesses are all provably inside.
// element_guard_test.cc checks the interpreter and the generated code,
// element_guard_gpu_test.cc the GPU against the interpreter.
#ifndef TESSEL_TESTS_CODEGEN_ELEMENT_GUARD_CASES_H_
#define TESSEL_TESTS_CODEGEN_ELEMENT_GUARD_CASES_H_

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

// Rows of 32 per block over a symbolic M (ceildiv(M, 32) blocks), so the
// last block's rows pass M: Y[r] = X[r - 1] + 2 X[r + 1] in a T.Parallel
// loop (row -1 and row M read 0; rows >= M are not written), a scalar
// statement Edge[32 b] = X[32 b + 32, 0], and Count[32 b + 40] += 1.
inline absl::StatusOr<Program> RaggedElementsProgram() {
  namespace T = tessel;
  T::ProgramBuilder p("ragged_elements");
  T::Expr M = p.dim("M");
  auto X = p.tensor("X", {M, 16}, T::f32);
  auto Y = p.tensor("Y", {M, 16}, T::f32);
  auto Edge = p.tensor("Edge", {M}, T::f32);
  auto Count = p.tensor("Count", {M}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(M, 32), {.threads = 128});
    auto [bx] = kernel.block_index();
    for (auto [i, j] : T::Parallel(32, 16)) {
      T::Expr r = bx * 32 + i;
      Y(r, j) = X(r - 1, j) + X(r + 1, j) * 2.0f;
    }
    Edge(bx * 32) = X(bx * 32 + 32, 0);
    T::atomic_add(Count(bx * 32 + 40), 1.0f);
  }
  return p.finish();
}

// Every index provable: a [128, 16] tensor in 4 blocks of 32 rows, and a
// serial loop over a symbolic N indexing a tensor of N elements.
inline absl::StatusOr<Program> ProvableElementsProgram() {
  namespace T = tessel;
  T::ProgramBuilder p("provable_elements");
  T::Expr N = p.dim("N");
  auto X = p.tensor("X", {128, 16}, T::f32);
  auto Y = p.tensor("Y", {128, 16}, T::f32);
  auto V = p.tensor("V", {N}, T::f32);
  auto S = p.tensor("S", {4}, T::f32);
  {
    T::Kernel kernel(4, {.threads = 128});
    auto [bx] = kernel.block_index();
    for (auto [i, j] : T::Parallel(32, 16)) {
      Y(bx * 32 + i, j) = X(bx * 32 + i, j) * 2.0f;
    }
    for (auto n : T::Serial(N)) V(n) = V(n) + 1.0f;
    S(bx) = X(bx * 32 + 31, 15);
  }
  return p.finish();
}

// Tile copies that start before row 0 (a halo of 8 rows): S = X[32 b - 8
// ...], Y[32 b ...] = S and Z[32 b - 8 ...] = S, over ceildiv(M, 32)
// blocks. Block 0 reads 8 rows of zeros and skips its first 8 stores; the
// last block's rows past M read 0 and are not stored.
inline absl::StatusOr<Program> HaloCopyProgram() {
  namespace T = tessel;
  T::ProgramBuilder p("halo_copy");
  T::Expr M = p.dim("M");
  auto X = p.tensor("X", {M, 16}, T::f32);
  auto Y = p.tensor("Y", {M, 16}, T::f32);
  auto Z = p.tensor("Z", {M, 16}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(M, 32), {.threads = 128});
    auto [bx] = kernel.block_index();
    auto s = T::alloc_shared({32, 16}, T::f32, "s");
    T::copy(X(bx * 32 - 8, 0), s);
    T::copy(s, Y(bx * 32, 0));
    T::copy(s, Z(bx * 32 - 8, 0));
  }
  return p.finish();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_ELEMENT_GUARD_CASES_H_
