#include "samples/splitk_gemm.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/tensor_ops.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

absl::StatusOr<Program> MakeSplitK(const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  SplitKConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.split_k,
                           params.IntInRange("split_k", 1, 65535, c.split_k));
  SAMPLES_ASSIGN_OR_RETURN(c.in_dtype, params.Dtype("in_dtype", f16));
  GemmTile& t = c.tile;
  SAMPLES_ASSIGN_OR_RETURN(t.block_m,
                           params.IntInRange("block_m", 1, 512, t.block_m));
  SAMPLES_ASSIGN_OR_RETURN(t.block_n,
                           params.IntInRange("block_n", 1, 512, t.block_n));
  SAMPLES_ASSIGN_OR_RETURN(t.block_k,
                           params.IntInRange("block_k", 1, 512, t.block_k));
  SAMPLES_ASSIGN_OR_RETURN(t.num_stages,
                           params.IntInRange("num_stages", 0, 8, t.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(t.threads,
                           params.IntInRange("threads", 32, 1024, t.threads));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return SplitKGemmProgram(c);
}

}  // namespace

absl::StatusOr<Program> SplitKGemmProgram(const SplitKConfig& c) {
  if (c.M <= 0 || c.N <= 0 || c.K <= 0 || c.split_k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("splitk_gemm: sizes must be positive, got M=", c.M,
                     " N=", c.N, " K=", c.K, " split_k=", c.split_k));
  }
  if (c.in_dtype != f16 && c.in_dtype != bf16) {
    return absl::InvalidArgumentError(
        absl::StrCat("splitk_gemm: inputs must be f16 or bf16, got ",
                     DtypeName(c.in_dtype)));
  }
  const GemmTile& t = c.tile;
  if (t.block_m <= 0 || t.block_n <= 0 || t.block_k <= 0 || t.threads <= 0 ||
      t.num_stages < 0) {
    return absl::InvalidArgumentError(
        "splitk_gemm: the tile sizes must be positive");
  }
  if (t.threads % 32 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("splitk_gemm: threads=", t.threads,
                     " must be a multiple of 32 (whole warps)"));
  }
  // Each slice covers a whole number of k tiles, so slices never overlap;
  // the last may run past K (zeros are read there).
  const int k_tiles = (c.K + t.block_k - 1) / t.block_k;
  const int tiles_per_split = (k_tiles + c.split_k - 1) / c.split_k;
  const int k_per_split = tiles_per_split * t.block_k;
  T::ProgramBuilder p("splitk_gemm");
  auto A = p.tensor("A", {c.M, c.K}, c.in_dtype);
  auto B = p.tensor("B", {c.K, c.N}, c.in_dtype);
  auto C = p.tensor("C", {c.M, c.N}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.N, t.block_n), T::ceildiv(c.M, t.block_m),
                     c.split_k, {.threads = t.threads});
    auto [bx, by, bz] = kernel.block_index();
    auto A_shared =
        T::alloc_shared({t.block_m, t.block_k}, c.in_dtype, "A_shared");
    auto B_shared =
        T::alloc_shared({t.block_k, t.block_n}, c.in_dtype, "B_shared");
    auto C_local = T::alloc_fragment({t.block_m, t.block_n}, f32, "C_local");
    T::clear(C_local);
    for (auto k : T::Pipelined(tiles_per_split,
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * t.block_m, bz * k_per_split + k * t.block_k), A_shared);
      T::copy(B(bz * k_per_split + k * t.block_k, bx * t.block_n), B_shared);
      T::gemm(A_shared, B_shared, C_local);
    }
    // Blocks of every slice add into the same C tile.
    T::atomic_add(C(by * t.block_m, bx * t.block_n), C_local);
  }
  return p.finish();
}

absl::StatusOr<Workload> SplitKGemmWorkload(const SplitKConfig& c,
                                            uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, SplitKGemmProgram(c));
  const int64_t mn = int64_t{c.M} * c.N;
  SAMPLES_ASSIGN_OR_RETURN(Program zero, ZeroProgram(mn, f32));
  Workload w;
  w.kernel = "splitk_gemm";
  w.shape = absl::StrCat(c.M, "x", c.N, "x", c.K, " split_k=", c.split_k, " ",
                         DtypeName(c.in_dtype), "->f32");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["A"],
                           RandomInput(c.in_dtype, {c.M, c.K}, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["B"],
                           RandomInput(c.in_dtype, {c.K, c.N}, seed + 1));
  // Not zero, so that a missing zeroing step shows in the check.
  w.tensors["C"] = HostTensor(f32, {c.M, c.N});
  w.tensors["C"].fill(7);
  w.steps.push_back({.program = zero, .args = {Arg("C", {mn})}});
  w.steps.push_back({.program = program, .args = {"A", "B", "C"}});
  w.main_step = 1;
  w.outputs = {"C"};
  w.flops = 2.0 * c.M * c.N * c.K;
  w.bytes = double(dtype_bytes(c.in_dtype)) *
                (double(c.M) * c.K + double(c.K) * c.N) +
            4.0 * mn;
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    return std::vector<Expected>{
        {"C",
         ReferenceGemm(w.tensors.at("A"), w.tensors.at("B"), GemmLayout::kNN),
         1e-3, 1e-3}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(splitk_gemm, MakeSplitK);

}  // namespace tessel::samples
