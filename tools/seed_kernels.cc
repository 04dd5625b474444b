// Registers the seed programs (tests/dsl/seed_programs.h) for tessel-warmup
// as "seed_gemm", "seed_split_k_gemm", ... beside the samples, which
// register themselves (samples/): samples/kernels.json warms both, and the
// tools tests compile them. An OBJECT library (tessel_seed_kernels), so
// that the registrations survive linking (include/tessel/registry.h).
#include <cstdint>
#include <limits>

#include "nlohmann/json.hpp"
#include "tessel/registry.h"
#include "tests/dsl/seed_programs.h"

namespace tessel::tools {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// Reads `key` as a positive int, or returns its error from the caller.
#define TESSEL_READ_SIZE(var, params, key)                                \
  int var = 0;                                                            \
  {                                                                       \
    absl::StatusOr<int64_t> value = (params).IntInRange(key, 1, kMaxInt); \
    if (!value.ok()) return value.status();                               \
    var = static_cast<int>(*value);                                       \
  }
#define TESSEL_READ_SIZE_OR(var, params, key, fallback) \
  int var = 0;                                          \
  {                                                     \
    absl::StatusOr<int64_t> value =                     \
        (params).IntInRange(key, 1, kMaxInt, fallback); \
    if (!value.ok()) return value.status();             \
    var = static_cast<int>(*value);                     \
  }

absl::StatusOr<seed::GemmTile> ReadGemmTile(const KernelParams& params) {
  seed::GemmTile t;
  TESSEL_READ_SIZE_OR(m, params, "block_m", t.m);
  TESSEL_READ_SIZE_OR(n, params, "block_n", t.n);
  TESSEL_READ_SIZE_OR(k, params, "block_k", t.k);
  TESSEL_READ_SIZE_OR(stages, params, "num_stages", t.num_stages);
  TESSEL_READ_SIZE_OR(threads, params, "threads", t.threads);
  return seed::GemmTile{m, n, k, stages, threads};
}

absl::StatusOr<Program> MakeTiledGemm(const nlohmann::json& json) {
  KernelParams params(json);
  TESSEL_READ_SIZE(m, params, "M");
  TESSEL_READ_SIZE(n, params, "N");
  TESSEL_READ_SIZE(k, params, "K");
  absl::StatusOr<seed::GemmTile> tile = ReadGemmTile(params);
  if (!tile.ok()) return tile.status();
  absl::StatusOr<DataType> c_dtype = params.Dtype("c_dtype", f16);
  if (!c_dtype.ok()) return c_dtype.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return seed::TiledGemm(m, n, k, *tile, *c_dtype);
}

absl::StatusOr<Program> MakeTiledGemmDynamicM(const nlohmann::json& json) {
  KernelParams params(json);
  TESSEL_READ_SIZE(n, params, "N");
  TESSEL_READ_SIZE(k, params, "K");
  absl::StatusOr<seed::GemmTile> tile = ReadGemmTile(params);
  if (!tile.ok()) return tile.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return seed::TiledGemmDynamicM(n, k, *tile);
}

absl::StatusOr<Program> MakeSplitKGemm(const nlohmann::json& json) {
  KernelParams params(json);
  TESSEL_READ_SIZE(m, params, "M");
  TESSEL_READ_SIZE(n, params, "N");
  TESSEL_READ_SIZE(k, params, "K");
  TESSEL_READ_SIZE(split_k, params, "split_k");
  absl::StatusOr<seed::GemmTile> tile = ReadGemmTile(params);
  if (!tile.ok()) return tile.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return seed::SplitKGemm(m, n, k, split_k, *tile);
}

absl::StatusOr<Program> MakeMbarrierPipelinedGemm(const nlohmann::json& json) {
  KernelParams params(json);
  TESSEL_READ_SIZE(m, params, "M");
  TESSEL_READ_SIZE(n, params, "N");
  TESSEL_READ_SIZE(k, params, "K");
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return seed::MbarrierPipelinedGemm(m, n, k);
}

// B, S, H, DK, DV and the chunk/bk/bv tile.
template <typename Make>
absl::StatusOr<Program> MakeLinearAttention(const nlohmann::json& json,
                                            Make make) {
  KernelParams params(json);
  TESSEL_READ_SIZE(b, params, "B");
  TESSEL_READ_SIZE(s, params, "S");
  TESSEL_READ_SIZE(h, params, "H");
  TESSEL_READ_SIZE(dk, params, "DK");
  TESSEL_READ_SIZE(dv, params, "DV");
  seed::LinearAttentionTile t;
  TESSEL_READ_SIZE_OR(chunk, params, "chunk", t.chunk);
  TESSEL_READ_SIZE_OR(bk, params, "block_k", t.bk);
  TESSEL_READ_SIZE_OR(bv, params, "block_v", t.bv);
  if (absl::Status st = params.CheckAllUsed(); !st.ok()) return st;
  return make(b, s, h, dk, dv, seed::LinearAttentionTile{chunk, bk, bv});
}

absl::StatusOr<Program> MakeLinearAttentionForward(const nlohmann::json& j) {
  return MakeLinearAttention(j, seed::LinearAttentionForward);
}

absl::StatusOr<Program> MakeLinearAttentionBackward(const nlohmann::json& j) {
  return MakeLinearAttention(j, seed::LinearAttentionBackward);
}

absl::StatusOr<Program> MakeRowSoftmaxCumsum(const nlohmann::json& json) {
  KernelParams params(json);
  TESSEL_READ_SIZE(m, params, "M");
  TESSEL_READ_SIZE(n, params, "N");
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return seed::RowSoftmaxCumsum(m, n);
}

}  // namespace

TESSEL_REGISTER_KERNEL(seed_gemm, MakeTiledGemm);
TESSEL_REGISTER_KERNEL(seed_gemm_dynamic_m, MakeTiledGemmDynamicM);
TESSEL_REGISTER_KERNEL(seed_split_k_gemm, MakeSplitKGemm);
TESSEL_REGISTER_KERNEL(seed_mbarrier_gemm, MakeMbarrierPipelinedGemm);
TESSEL_REGISTER_KERNEL(seed_linear_attention_fwd, MakeLinearAttentionForward);
TESSEL_REGISTER_KERNEL(seed_linear_attention_bwd, MakeLinearAttentionBackward);
TESSEL_REGISTER_KERNEL(seed_row_softmax_cumsum, MakeRowSoftmaxCumsum);

}  // namespace tessel::tools
