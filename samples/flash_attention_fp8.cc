#include "samples/flash_attention_fp8.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/flash_attention.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;
// Keys a transpose block moves: one 128-byte row of Vt per head column.
constexpr int kTransposeKeys = 128;

absl::Status Refuse(const std::source_location& loc, const std::string& kernel,
                    const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(loc.file_name(), ":", loc.line(), ": ", kernel, ": ", what));
}

absl::Status CheckConfig(const Fp8FlashAttentionConfig& c,
                         const std::string& kernel,
                         const std::source_location& loc) {
  if (c.B <= 0 || c.S <= 0 || c.H <= 0 || c.D <= 0) {
    return Refuse(loc, kernel,
                  absl::StrCat("sizes must be positive, got B=", c.B,
                               " S=", c.S, " H=", c.H, " D=", c.D));
  }
  // fp8 wgmma reads Q and K as rows of whole 128-byte swizzle atoms.
  if (c.D != 128 && c.D != 256) {
    return Refuse(loc, kernel,
                  absl::StrCat("D=", c.D,
                               " must be 128 or 256 (fp8 wgmma reads Q and K "
                               "in rows of whole 128-byte atoms)"));
  }
  if (c.block_m <= 0 || c.block_n <= 0 || c.num_stages < 0 || c.threads <= 0 ||
      c.threads % 32 != 0) {
    return Refuse(
        loc, kernel,
        absl::StrCat("bad tile: block_m=", c.block_m, " block_n=", c.block_n,
                     " num_stages=", c.num_stages, " threads=", c.threads));
  }
  if (c.H > 65535 || c.B > 65535) {
    return Refuse(loc, kernel,
                  "H and B must fit the grid's y / z limit (65535)");
  }
  return absl::OkStatus();
}

absl::StatusOr<Fp8FlashAttentionConfig> ConfigFromJson(
    const nlohmann::json& json, const Target& target,
    const std::string& kernel) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  Fp8FlashAttentionConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.S, params.IntInRange("S", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.D, params.IntInRange("D", 1, 256));
  SAMPLES_ASSIGN_OR_RETURN(c.causal, params.Bool("causal", false));
  SAMPLES_RETURN_IF_ERROR(
      ReadForwardTile(params, c.block_m, c.block_n, c.num_stages, c.threads));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  if (target.arch() != "sm_90a") {
    return absl::FailedPreconditionError(absl::StrCat(
        kernel, ": built for sm_90a only, not ", target.arch(),
        ": fp8 tensor cores need sm_89 or later and tessel's fp8 gemms take "
        "wgmma (sm_90a); elsewhere they would run as FMA loops"));
  }
  return c;
}

absl::StatusOr<Program> MakeTranspose(const nlohmann::json& json,
                                      const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(Fp8FlashAttentionConfig c,
                           ConfigFromJson(json, target, "fp8_transpose_v"));
  return Fp8TransposeVProgram(c);
}

absl::StatusOr<Program> MakeAttention(const nlohmann::json& json,
                                      const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(Fp8FlashAttentionConfig c,
                           ConfigFromJson(json, target, "flash_attention_fp8"));
  return Fp8FlashAttentionProgram(c);
}

}  // namespace

int64_t VtKeys(int64_t S) { return (S + 15) / 16 * 16; }

absl::StatusOr<Program> Fp8TransposeVProgram(const Fp8FlashAttentionConfig& c,
                                             std::source_location loc) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c, "fp8_transpose_v", loc));
  const int bt = kTransposeKeys, D = c.D;
  T::ProgramBuilder p("fp8_transpose_v");
  auto V = p.tensor("V", {c.B, c.S, c.H, D}, fp8_e4m3);
  auto Vt = p.tensor("Vt", {c.B, c.H, D, VtKeys(c.S)}, fp8_e4m3);
  {
    T::Kernel kernel(T::ceildiv(c.S, bt), c.H, c.B, {.threads = 128});
    auto [bx, by, bz] = kernel.block_index();
    auto V_shared = T::alloc_shared({bt, D}, fp8_e4m3, "V_shared");
    auto Vt_shared = T::alloc_shared({D, bt}, fp8_e4m3, "Vt_shared");
    // Keys past S read as zeros and land in Vt's padding (past VtKeys the
    // stores are dropped): P V never multiplies a 0 by stale bytes (e4m3
    // has NaN).
    T::copy(V(bz, T::slice(bx * bt, (bx + 1) * bt), by, T::all), V_shared);
    for (auto [d, s] : T::Parallel(D, bt)) Vt_shared(d, s) = V_shared(s, d);
    T::copy(Vt_shared, Vt(bz, by, T::all, T::slice(bx * bt, (bx + 1) * bt)));
  }
  return p.finish();
}

absl::StatusOr<Program> Fp8FlashAttentionProgram(
    const Fp8FlashAttentionConfig& c, std::source_location loc) {
  const std::string name =
      c.causal ? "flash_attention_fp8_causal" : "flash_attention_fp8";
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c, name, loc));
  const int bm = c.block_m, bn = c.block_n, D = c.D;
  const bool ragged = c.S % bn != 0;
  T::ProgramBuilder p(name);
  auto Q = p.tensor("Q", {c.B, c.S, c.H, D}, fp8_e4m3);
  auto K = p.tensor("K", {c.B, c.S, c.H, D}, fp8_e4m3);
  auto Vt = p.tensor("Vt", {c.B, c.H, D, VtKeys(c.S)}, fp8_e4m3);
  auto descale_q = p.tensor("descale_q", {c.B, c.H}, f32);
  auto descale_k = p.tensor("descale_k", {c.B, c.H}, f32);
  auto descale_v = p.tensor("descale_v", {c.B, c.H}, f32);
  auto O = p.tensor("O", {c.B, c.S, c.H, D}, bf16);
  {
    T::Kernel kernel(T::ceildiv(c.S, bm), c.H, c.B, {.threads = c.threads});
    auto [block_x, by, bz] = kernel.block_index();
    // Causal: the longest query tiles first (flash_attention.cc says why).
    const int q_tiles = (c.S + bm - 1) / bm;
    T::Expr bx = c.causal ? T::Expr(q_tiles - 1) - block_x : block_x;
    auto Q_shared = T::alloc_shared({bm, D}, fp8_e4m3, "Q_shared");
    auto K_shared = T::alloc_shared({bn, D}, fp8_e4m3, "K_shared");
    auto Vt_shared = T::alloc_shared({D, bn}, fp8_e4m3, "Vt_shared");
    auto acc_s = T::alloc_fragment({bm, bn}, f32, "acc_s");
    auto P_shared = T::alloc_shared({bm, bn}, fp8_e4m3, "P_shared");
    auto acc_o = T::alloc_fragment({bm, D}, f32, "acc_o");
    auto row_max = T::alloc_fragment({bm}, f32, "row_max");
    auto row_max_prev = T::alloc_fragment({bm}, f32, "row_max_prev");
    auto row_scale = T::alloc_fragment({bm}, f32, "row_scale");
    auto row_sum = T::alloc_fragment({bm}, f32, "row_sum");
    auto logsum = T::alloc_fragment({bm}, f32, "logsum");
    // exp(q.k * dq * dk / sqrt(D)) = exp2(s * scale): the descales of Q and
    // K fold into the softmax's scale (positive, so the max of the raw
    // scores is the max of the scaled ones).
    const T::Expr scale = T::let(
        descale_q(bz, by) * descale_k(bz, by) * (kLog2e / std::sqrt(double(D))),
        "score_scale");
    const T::Expr v_scale = T::let(descale_v(bz, by), "v_scale");
    const T::Expr neg_inf = -T::infinity(f32);
    T::Expr row0 = bx * bm;

    T::copy(Q(bz, T::slice(row0, row0 + bm), by, T::all), Q_shared);
    T::fill(acc_o, 0);
    T::fill(logsum, 0);
    T::fill(row_max, neg_inf);
    T::Expr steps = c.causal
                        ? T::min(T::ceildiv(row0 + bm, bn), T::ceildiv(c.S, bn))
                        : T::Expr(T::ceildiv(c.S, bn));
    for (auto k :
         T::Pipelined(steps, {.num_stages = c.num_stages, .name = "k"})) {
      T::copy(K(bz, T::slice(k * bn, (k + 1) * bn), by, T::all), K_shared);
      T::gemm(Q_shared, K_shared, acc_s,
              {.transpose_B = true,
               .clear_accum = true,
               .policy = T::GemmWarpPolicy::kFullRow});
      // Only the blocks that cross the diagonal or the sequence's end.
      if (c.causal || ragged) {
        T::Expr crosses = (k + 1) * bn > c.S;
        if (c.causal) crosses = crosses || ((k + 1) * bn > row0 + 1);
        T::If(crosses, [&] {
          for (auto [i, j] : T::Parallel(bm, bn)) {
            T::Expr key = k * bn + j;
            T::Expr visible = key < c.S;
            if (c.causal) visible = visible && (row0 + i >= key);
            acc_s(i, j) = T::select(visible, acc_s(i, j), neg_inf);
          }
        });
      }
      T::copy(Vt(bz, by, T::all, T::slice(k * bn, (k + 1) * bn)), Vt_shared);
      // The online softmax (flash_attention.cc's SoftmaxTimesV); the running
      // max covers every block so far, so a fully masked row stays finite.
      T::copy(row_max, row_max_prev);
      T::reduce_max(acc_s, row_max, {.dim = 1, .clear = false});
      for (auto i : T::Parallel(bm)) {
        row_scale(i) = T::exp2(row_max_prev(i) * scale - row_max(i) * scale);
      }
      for (auto [i, j] : T::Parallel(bm, D)) acc_o(i, j) *= row_scale(i);
      for (auto [i, j] : T::Parallel(bm, bn)) {
        acc_s(i, j) = T::exp2(acc_s(i, j) * scale - row_max(i) * scale);
      }
      // The sum is of the f32 probabilities; P V sees them rounded to e4m3
      // (in [0, 1], where e4m3 keeps 3 bits of mantissa down to 2^-6).
      T::reduce_sum(acc_s, row_sum, {.dim = 1});
      for (auto i : T::Parallel(bm)) {
        logsum(i) = logsum(i) * row_scale(i) + row_sum(i);
      }
      T::copy(acc_s, P_shared);
      T::gemm(P_shared, Vt_shared, acc_o,
              {.transpose_B = true, .policy = T::GemmWarpPolicy::kFullRow});
    }
    // V's descale with the softmax's denominator: one factor per row.
    for (auto i : T::Parallel(bm)) row_scale(i) = v_scale / logsum(i);
    for (auto [i, j] : T::Parallel(bm, D)) acc_o(i, j) *= row_scale(i);
    T::copy(acc_o, O(bz, T::slice(row0, row0 + bm), by, T::all));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(fp8_transpose_v, MakeTranspose);
TESSEL_REGISTER_KERNEL(flash_attention_fp8, MakeAttention);

}  // namespace tessel::samples
