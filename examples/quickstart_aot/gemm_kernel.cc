#include "gemm_kernel.h"

#include <nlohmann/json.hpp>

#include "tessel/registry.h"

namespace T = tessel;

namespace {
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
}  // namespace

absl::StatusOr<T::Program> QuickstartGemm(int m, int n, int k) {
  T::ProgramBuilder p("quickstart_gemm");
  auto A = p.tensor("A", {m, k}, T::f16);
  auto B = p.tensor("B", {k, n}, T::f16);
  auto C = p.tensor("C", {m, n}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(n, kBlockN), T::ceildiv(m, kBlockM),
                     {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({kBlockM, kBlockK}, T::f16);
    auto Bs = T::alloc_shared({kBlockK, kBlockN}, T::f16);
    auto acc = T::alloc_fragment({kBlockM, kBlockN}, T::f32);
    T::clear(acc);
    for (auto kk : T::Pipelined(T::ceildiv(k, kBlockK), {.num_stages = 3})) {
      T::copy(A(by * kBlockM, kk * kBlockK), As);
      T::copy(B(kk * kBlockK, bx * kBlockN), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C(by * kBlockM, bx * kBlockN));
  }
  return p.finish();
}

namespace {

// The manifest's params: {"M": 256, "N": 256, "K": 256}.
absl::StatusOr<T::Program> MakeQuickstartGemm(const nlohmann::json& json) {
  T::KernelParams params(json);
  absl::StatusOr<int64_t> m = params.IntInRange("M", 1, 1 << 20);
  if (!m.ok()) return m.status();
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 1 << 20);
  if (!n.ok()) return n.status();
  absl::StatusOr<int64_t> k = params.IntInRange("K", 1, 1 << 20);
  if (!k.ok()) return k.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return QuickstartGemm(static_cast<int>(*m), static_cast<int>(*n),
                        static_cast<int>(*k));
}

}  // namespace

TESSEL_REGISTER_KERNEL(quickstart_gemm, MakeQuickstartGemm);
