#include "samples/gemm_k_slices.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

// The reduce kernel's block: 16 x 256 f32, 16 per thread (four 16-byte
// chunks); it only streams memory.
constexpr int kReduceRows = 16;
constexpr int kReduceCols = 256;
constexpr int kReduceThreads = 256;

int KSteps(const GemmConfig& c) {
  return (c.K + c.tile.block_k - 1) / std::max(c.tile.block_k, 1);
}

absl::StatusOr<Program> MakeReduce(const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  GemmConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.tile.split_k,
                           params.IntInRange("split_k", 2, 1024));
  SAMPLES_ASSIGN_OR_RETURN(c.tile.block_k,
                           params.IntInRange("block_k", 1, 512));
  SAMPLES_ASSIGN_OR_RETURN(c.in_dtype, params.Dtype("in_dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.out_dtype, params.Dtype("out_dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.bias_relu, params.Bool("bias_relu", false));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return GemmSplitKReduceProgram(c);
}

}  // namespace

int GemmKStepsPerSlice(const GemmConfig& c) {
  const int slices = std::max(c.tile.split_k, 1);
  return (KSteps(c) + slices - 1) / slices;
}

int GemmKSlices(const GemmConfig& c) {
  if (c.tile.split_k <= 1 || c.K <= 0 || c.tile.block_k <= 0) return 1;
  const int per_slice = GemmKStepsPerSlice(c);
  return (KSteps(c) + per_slice - 1) / per_slice;
}

absl::StatusOr<Program> GemmSplitKReduceProgram(const GemmConfig& c) {
  const int slices = GemmKSlices(c);
  if (c.M <= 0 || c.N <= 0 || slices <= 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemm_split_k_reduce: needs positive sizes and K cut into two or "
        "more slices, got M=",
        c.M, " N=", c.N, " K=", c.K, " split_k=", c.tile.split_k,
        " block_k=", c.tile.block_k));
  }
  T::ProgramBuilder p("gemm_split_k_reduce");
  auto P = p.tensor("partials", {slices, c.M, c.N}, f32);
  std::optional<T::Buffer> Bias;
  if (c.bias_relu) Bias = p.tensor("bias", {c.N}, c.in_dtype);
  auto C = p.tensor("C", {c.M, c.N}, c.out_dtype);
  {
    T::Kernel kernel(T::ceildiv(c.N, kReduceCols), T::ceildiv(c.M, kReduceRows),
                     {.threads = kReduceThreads});
    auto [bx, by] = kernel.block_index();
    const T::Expr row = by * kReduceRows, col = bx * kReduceCols;
    // Slice s of the partial sums: the block's rows and columns.
    auto slice = [&](T::Expr s) {
      return P(s, T::slice(row, row + kReduceRows),
               T::slice(col, col + kReduceCols));
    };
    auto sum = T::alloc_fragment({kReduceRows, kReduceCols}, f32, "sum");
    auto part = T::alloc_fragment({kReduceRows, kReduceCols}, f32, "part");
    T::copy(slice(0), sum);
    for (auto s : T::Serial(1, slices, {.name = "s"})) {
      T::copy(slice(s), part);
      for (auto [i, j] : T::Parallel(kReduceRows, kReduceCols))
        sum(i, j) = sum(i, j) + part(i, j);
    }
    if (Bias) {
      // In shared memory: a fragment read at column j alone would be
      // replicated in every thread (256 registers).
      auto bias_s = T::alloc_shared({kReduceCols}, f32, "bias_s");
      T::copy((*Bias)(col), bias_s);
      for (auto [i, j] : T::Parallel(kReduceRows, kReduceCols))
        sum(i, j) = T::max(sum(i, j) + bias_s(j), 0.0f);
    }
    T::copy(sum, C(row, col));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(gemm_split_k_reduce, MakeReduce);

}  // namespace tessel::samples
