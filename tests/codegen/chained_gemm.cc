#include "tests/codegen/chained_gemm.h"

namespace tessel::testing {

namespace T = tessel;

absl::StatusOr<Program> ChainedGemm(const ChainedGemmShape& s) {
  const int bm = s.block_m;
  T::ProgramBuilder p("chained_gemm");
  auto A = p.tensor("A", {s.M, s.K}, T::f16);
  auto B = p.tensor("B", {s.K, s.N}, T::f16);
  auto C = p.tensor("C", {s.N, s.D}, T::f16);
  auto O = p.tensor("O", {s.M, s.D}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(s.M, bm), {.threads = s.threads});
    auto [bx] = kernel.block_index();
    auto A_shared = T::alloc_shared({bm, s.K}, T::f16, "A_shared");
    auto B_shared = T::alloc_shared({s.K, s.N}, T::f16, "B_shared");
    auto C_shared = T::alloc_shared({s.N, s.D}, T::f16, "C_shared");
    auto acc_s = T::alloc_fragment({bm, s.N}, T::f32, "acc_s");
    auto p_tile = s.p_in_registers ? T::alloc_fragment({bm, s.N}, T::f16, "P")
                                   : T::alloc_shared({bm, s.N}, T::f16, "P");
    auto acc_o = T::alloc_fragment({bm, s.D}, T::f32, "acc_o");
    T::copy(A(bx * bm, 0), A_shared);
    T::copy(B(0, 0), B_shared);
    T::copy(C(0, 0), C_shared);
    T::clear(acc_s);
    T::gemm(A_shared, B_shared, acc_s, {.policy = s.first});
    for (auto [i, j] : T::Parallel(bm, s.N)) acc_s(i, j) = acc_s(i, j) * 0.5f;
    T::copy(acc_s, p_tile);
    T::clear(acc_o);
    T::gemm(p_tile, C_shared, acc_o, {.policy = s.second});
    T::copy(acc_o, O(bx * bm, 0));
  }
  return p.finish();
}

}  // namespace tessel::testing
