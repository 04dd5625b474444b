#include "samples/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/flash_attention_reference.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;

// Without tile params, the target's tile and overlap (what the sample runs
// there), as the backward's factory does.
absl::StatusOr<Program> MakeFlashAttention(const nlohmann::json& json,
                                           const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionConfig c,
                           FlashAttentionConfigFromJson(json));
  if (!json.contains("block_m") && !json.contains("block_n") &&
      !json.contains("threads") && !json.contains("num_stages")) {
    if (!json.contains("overlap")) c.overlap = DeviceOverlap(c, target.sm());
    c = WithDeviceTile(c, target.sm());
    if (!json.contains("align_end") && !json.contains("mask_after") &&
        DeviceEndAlignedMask(c, target.sm())) {
      c.align_end = c.mask_after = true;
    }
  }
  return FlashAttentionProgram(c);
}

}  // namespace

absl::Status CheckFlashAttentionConfig(const FlashAttentionConfig& c,
                                       const std::string& kernel) {
  if (c.B <= 0 || c.S <= 0 || c.H <= 0 || c.D <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel, ": sizes must be positive, got B=", c.B,
                     " S=", c.S, " H=", c.H, " D=", c.D));
  }
  if (c.block_m <= 0 || c.block_n <= 0 || c.threads <= 0 || c.num_stages < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel, ": block_m, block_n and threads must be positive"));
  }
  // Q K^T steps over D in the tensor cores' k16, and P V's output columns
  // are split over the warps in 16s.
  if (c.D % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel, ": D=", c.D, " must be a multiple of 16 (e.g. 64, 96, 128)"));
  }
  if (c.heads_kv < 0 || (c.heads_kv > 0 && c.H % c.heads_kv != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel, ": heads_kv=", c.heads_kv, " must divide H=", c.H,
                     " (0 means H)"));
  }
  if (c.H > 65535 || c.B > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel, ": H and B must fit the grid's y / z limit (65535)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<FlashAttentionConfig> FlashAttentionConfigFromJson(
    const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  FlashAttentionConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.S, params.IntInRange("S", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.D, params.IntInRange("D", 1, 512));
  SAMPLES_ASSIGN_OR_RETURN(c.heads_kv,
                           params.IntInRange("heads_kv", 0, kMax, 0));
  SAMPLES_ASSIGN_OR_RETURN(c.causal, params.Bool("causal", false));
  SAMPLES_ASSIGN_OR_RETURN(c.lse, params.Bool("lse", false));
  SAMPLES_RETURN_IF_ERROR(
      ReadForwardTile(params, c.block_m, c.block_n, c.num_stages, c.threads));
  SAMPLES_ASSIGN_OR_RETURN(c.p_in_registers,
                           params.Bool("p_in_registers", c.p_in_registers));
  SAMPLES_ASSIGN_OR_RETURN(c.overlap, params.Bool("overlap", c.overlap));
  SAMPLES_ASSIGN_OR_RETURN(c.align_end, params.Bool("align_end", c.align_end));
  SAMPLES_ASSIGN_OR_RETURN(c.mask_after,
                           params.Bool("mask_after", c.mask_after));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return c;
}

absl::Status ReadForwardTile(const KernelParams& params, int& block_m,
                             int& block_n, int& num_stages, int& threads) {
  SAMPLES_ASSIGN_OR_RETURN(block_m,
                           params.IntInRange("block_m", 1, 256, block_m));
  SAMPLES_ASSIGN_OR_RETURN(block_n,
                           params.IntInRange("block_n", 1, 256, block_n));
  SAMPLES_ASSIGN_OR_RETURN(num_stages,
                           params.IntInRange("num_stages", 0, 8, num_stages));
  SAMPLES_ASSIGN_OR_RETURN(threads,
                           params.IntInRange("threads", 32, 1024, threads));
  return absl::OkStatus();
}

int KvHeads(const FlashAttentionConfig& c) {
  return c.heads_kv == 0 ? c.H : c.heads_kv;
}

std::string FlashAttentionName(const FlashAttentionConfig& c) {
  return absl::StrCat("flash_attention", KvHeads(c) != c.H ? "_gqa" : "",
                      c.lse ? "_lse" : "", c.causal ? "_causal" : "");
}

FlashAttentionConfig WithDeviceTile(FlashAttentionConfig c, int sm) {
  // Larger heads would not fit two stages of K and V in shared memory.
  if (HopperSharedMemory(sm) && c.D <= 128) {
    // D <= 64: three consumer warpgroups, whose gemms are short enough
    // for the third to fill the tensor cores' idle time.
    const bool small = c.D <= 64;
    c.block_m = small ? 192 : 128;
    c.block_n = 128;
    c.threads = small ? 384 : 256;
    if (c.overlap) c.num_stages = 3;
  }
  return c;
}

bool DeviceOverlap(const FlashAttentionConfig& c, int sm) {
  return HopperSharedMemory(sm) && c.D > 64 && c.D <= 128;
}

bool DeviceEndAlignedMask(const FlashAttentionConfig& c, int sm) {
  return HopperSharedMemory(sm) && c.causal && c.D <= 64 && c.block_m == 192 &&
         !c.overlap;
}

FlashBuffers AllocFlashBuffers(const FlashAttentionConfig& c) {
  const int bm = c.block_m, bn = c.block_n, D = c.D;
  return FlashBuffers{
      .Q_shared = T::alloc_shared({bm, D}, f16, "Q_shared"),
      .K_shared = T::alloc_shared({bn, D}, f16, "K_shared"),
      .V_shared = T::alloc_shared({bn, D}, f16, "V_shared"),
      .acc_s = T::alloc_fragment({bm, bn}, f32, "acc_s"),
      // P for the second gemm, in f16: registers (TileLang's form) or
      // shared.
      .acc_s_cast = c.p_in_registers
                        ? T::alloc_fragment({bm, bn}, f16, "acc_s_cast")
                        : T::alloc_shared({bm, bn}, f16, "acc_s_cast"),
      .acc_o = T::alloc_fragment({bm, D}, f32, "acc_o"),
      .scores_max = T::alloc_fragment({bm}, f32, "scores_max"),
      .scores_max_prev = T::alloc_fragment({bm}, f32, "scores_max_prev"),
      .scores_scale = T::alloc_fragment({bm}, f32, "scores_scale"),
      .scores_sum = T::alloc_fragment({bm}, f32, "scores_sum"),
      .logsum = T::alloc_fragment({bm}, f32, "logsum"),
  };
}

void SoftmaxTimesV(const Buffer& acc_s, const Buffer& p, const Buffer& V_shared,
                   const Buffer& acc_o, const OnlineSoftmax& st, int bm, int bn,
                   int D, double scale) {
  // New running max, rescale what was summed so far. The max runs over
  // every block so far: a row whose keys in this block are all masked
  // (bm > bn, causal) keeps a finite max.
  T::copy(st.max, st.max_prev);
  T::reduce_max(acc_s, st.max, {.dim = 1, .clear = false});
  for (auto i : T::Parallel(bm)) {
    st.scale(i) = T::exp2(st.max_prev(i) * scale - st.max(i) * scale);
  }
  for (auto [i, j] : T::Parallel(bm, D)) acc_o(i, j) *= st.scale(i);
  for (auto [i, j] : T::Parallel(bm, bn)) {
    acc_s(i, j) = T::exp2(acc_s(i, j) * scale - st.max(i) * scale);
  }
  // Sum before P V: acc_s is dead once cast, which frees its registers for
  // the second gemm.
  T::reduce_sum(acc_s, st.sum, {.dim = 1});
  for (auto i : T::Parallel(bm)) {
    st.logsum(i) = st.logsum(i) * st.scale(i) + st.sum(i);
  }
  T::copy(acc_s, p);
  T::gemm(p, V_shared, acc_o, {.policy = T::GemmWarpPolicy::kFullRow});
}

PipelineOptions FlashPipeline(const FlashAttentionConfig& c) {
  PipelineOptions o{.num_stages = c.num_stages, .name = "k"};
  if (c.overlap) {
    // The body: copy K, init S, S = Q K^T, copy V, then SoftmaxTimesV's
    // max_prev, max, scale, O *= scale, P = exp2, sum, logsum, cast, O += P V.
    // P V (stage 1) is issued right after S = Q K^T; O *= scale moves
    // after the logsum, where P V of the previous block must be done.
    // The copies are the producer's (-1, as TileLang writes them).
    o.order = {-1, 0, 1, -1, 3, 4, 5, 9, 6, 7, 8, 10, 2};
    o.stage = {-1, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (c.mask_after) {
      // copy K, S = Q K^T, the mask (when one is needed), copy V, the
      // softmax, P V: P V of the previous block is issued right after
      // Q K^T, before the mask waits for it.
      if (c.causal || c.S % c.block_n != 0) {
        o.order = {-1, 0, 2, -1, 3, 4, 5, 9, 6, 7, 8, 10, 1};
      } else {
        o.order = {-1, 0, -1, 2, 3, 4, 8, 5, 6, 7, 9, 1};
        o.stage = {-1, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      }
    }
  }
  return o;
}

absl::StatusOr<Program> FlashAttentionProgram(const FlashAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckFlashAttentionConfig(c, "flash_attention"));
  const int bm = c.block_m, bn = c.block_n, D = c.D;
  // exp(x / sqrt(D)) = exp2(x * scale).
  const double scale = kLog2e / std::sqrt(static_cast<double>(D));
  // Keys past the sequence's end are read as zeros: mask them.
  const bool ragged = c.S % bn != 0;
  const int Hkv = KvHeads(c);
  T::ProgramBuilder p(FlashAttentionName(c));
  auto Q = p.tensor("Q", {c.B, c.S, c.H, D}, f16);
  auto K = p.tensor("K", {c.B, c.S, Hkv, D}, f16);
  auto V = p.tensor("V", {c.B, c.S, Hkv, D}, f16);
  auto O = p.tensor("O", {c.B, c.S, c.H, D}, f16);
  std::optional<T::Buffer> LSE;
  if (c.lse) LSE = p.tensor("LSE", {c.B, c.H, c.S}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.S, bm), c.H, c.B, {.threads = c.threads});
    auto [block_x, by, bz] = kernel.block_index();
    // The key / value head of query head `by`.
    T::Expr kv_head = Hkv == c.H ? by : by / (c.H / Hkv);
    // Causal: the last query tiles have the most key blocks; blocks start
    // in launch order, so run those first and leave the short ones for the
    // tail of the grid. (Longest first over all heads, the query tile as the
    // grid's slowest dimension, was slower on the H200: 1.312 against 1.007
    // ms at B8 S4096 H16 D128; the heads side by side share no K / V in L2.)
    const int q_tiles = (c.S + bm - 1) / bm;
    T::Expr bx = c.causal ? T::Expr(q_tiles - 1) - block_x : block_x;
    // The tile's first query row. With align_end (causal), the tiles end at
    // multiples of bm from the sequence's end, so the ragged tile is the
    // shortest one, clamped to row 0 (it overlaps the next tile; those rows
    // are computed twice, the same values), not the longest one.
    T::Expr row0 = bx * bm, row_end = (bx + 1) * bm;
    if (c.causal && c.align_end && c.S % bm != 0) {
      row0 = T::max(T::Expr(c.S) - (block_x + 1) * bm, T::Expr(0));
      row_end = row0 + bm;
    }
    auto [Q_shared, K_shared, V_shared, acc_s, acc_s_cast, acc_o, scores_max,
          scores_max_prev, scores_scale, scores_sum, logsum] =
        AllocFlashBuffers(c);
    const T::Expr neg_inf = -T::infinity(f32);

    T::copy(Q(bz, T::slice(row0, row_end), by, T::all), Q_shared);
    T::fill(acc_o, 0);
    T::fill(logsum, 0);
    T::fill(scores_max, neg_inf);
    T::Expr loop_range =
        c.causal ? T::min(T::ceildiv(row_end, bn), T::ceildiv(c.S, bn))
                 : T::Expr(T::ceildiv(c.S, bn));
    for (auto k : T::Pipelined(loop_range, FlashPipeline(c))) {
      T::copy(K(bz, T::slice(k * bn, (k + 1) * bn), kv_head, T::all), K_shared);
      T::Expr crosses = (k + 1) * bn > c.S;
      if (c.causal) crosses = crosses || ((k + 1) * bn > row0 + 1);
      auto visible = [&](T::Expr i, T::Expr j) {
        T::Expr q_idx = row0 + i, k_idx = k * bn + j;
        T::Expr v = c.causal ? (q_idx >= k_idx) : (k_idx < c.S);
        if (c.causal && ragged) v = v && (k_idx < c.S);
        return v;
      };
      if (c.mask_after) {
        // S = Q K^T overwrites acc_s (wgmma scale-d 0); the blocks that
        // cross the diagonal or the sequence's end are masked afterwards.
        T::gemm(Q_shared, K_shared, acc_s,
                {.transpose_B = true,
                 .clear_accum = true,
                 .policy = T::GemmWarpPolicy::kFullRow});
        if (c.causal || ragged) {
          T::If(crosses, [&] {
            for (auto [i, j] : T::Parallel(bm, bn)) {
              acc_s(i, j) = T::select(visible(i, j), acc_s(i, j), neg_inf);
            }
          });
        }
      } else {
        if (c.causal || ragged) {
          // Only the key blocks that cross the diagonal (a key after the
          // block's first query) or the sequence's end need the mask: the
          // scores start at 0 or -inf and the gemm adds to them.
          T::If(crosses, [&] {
            for (auto [i, j] : T::Parallel(bm, bn)) {
              acc_s(i, j) = T::select(visible(i, j), T::Expr(0.0f), neg_inf);
            }
          }).Else([&] { T::clear(acc_s); });
        } else {
          T::clear(acc_s);
        }
        T::gemm(Q_shared, K_shared, acc_s,
                {.transpose_B = true, .policy = T::GemmWarpPolicy::kFullRow});
      }
      T::copy(V(bz, T::slice(k * bn, (k + 1) * bn), kv_head, T::all), V_shared);
      SoftmaxTimesV(
          acc_s, acc_s_cast, V_shared, acc_o,
          {scores_max, scores_max_prev, scores_scale, scores_sum, logsum}, bm,
          bn, D, scale);
    }
    // One reciprocal per row instead of a division per element.
    for (auto i : T::Parallel(bm)) scores_scale(i) = 1.0f / logsum(i);
    for (auto [i, j] : T::Parallel(bm, D)) acc_o(i, j) *= scores_scale(i);
    T::copy(acc_o, O(bz, T::slice(row0, row_end), by, T::all));
    if (LSE) {
      // ln(sum) + max / sqrt(D): the row's log-sum-exp in natural log.
      auto lse = T::alloc_fragment({bm}, f32, "lse");
      const double ln_scale = 1.0 / std::sqrt(static_cast<double>(D));
      for (auto i : T::Parallel(bm)) {
        lse(i) = T::log(logsum(i)) + scores_max(i) * ln_scale;
      }
      T::copy(lse, (*LSE)(bz, by, T::slice(row0, row_end)));
    }
  }
  return p.finish();
}

BenchLabel FlashAttentionLabel(const FlashAttentionConfig& c,
                               std::string pass) {
  const int Hkv = KvHeads(c);
  BenchLabel l{.kernel = "flash_attention",
               .pass = std::move(pass),
               .variant = c.causal ? "causal" : "full",
               .dtype = "f16",
               .shape = {{"B", c.B}, {"S", c.S}, {"H", c.H}, {"D", c.D}}};
  if (Hkv != c.H) l.shape.insert(l.shape.begin() + 3, {"Hkv", Hkv});
  l.size = absl::StrCat("B", c.B, " S", c.S, " H", c.H,
                        Hkv != c.H ? absl::StrCat(" Hkv", Hkv) : "", " D", c.D);
  return l;
}

absl::StatusOr<Workload> FlashAttentionWorkload(const FlashAttentionConfig& c,
                                                uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, FlashAttentionProgram(c));
  const int Hkv = KvHeads(c);
  std::vector<int64_t> shape = {c.B, c.S, c.H, c.D};
  std::vector<int64_t> kv_shape = {c.B, c.S, Hkv, c.D};
  Workload w;
  w.kernel = FlashAttentionName(c);
  w.shape = absl::StrCat("B=", c.B, " S=", c.S, " H=", c.H,
                         Hkv != c.H ? absl::StrCat(" Hkv=", Hkv) : "",
                         " D=", c.D, " f16");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(f16, shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"],
                           RandomInput(f16, kv_shape, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"],
                           RandomInput(f16, kv_shape, seed + 2));
  w.tensors["O"] = Zeros(f16, shape);
  Step step{.program = program, .args = {"Q", "K", "V", "O"}};
  step.pass_config.consumer_gemm_turns = c.gemm_turns;
  w.outputs = {"O"};
  if (c.lse) {
    w.tensors["LSE"] = Zeros(f32, {c.B, c.H, c.S});
    step.args.push_back("LSE");
    w.outputs.push_back("LSE");
  }
  w.steps.push_back(std::move(step));
  // Q K^T and P V; causal counts the visible half, as FlashAttention does.
  w.flops = 4.0 * c.B * c.H * double(c.S) * c.S * c.D * (c.causal ? 0.5 : 1);
  w.bytes = 2.0 * (2 * NumElements(shape) + 2 * NumElements(kv_shape));
  w.label = FlashAttentionLabel(c, "fwd");
  const bool causal = c.causal, lse = c.lse;
  w.reference =
      [causal,
       lse](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    AttentionForward f = ReferenceAttentionForward(
        w.tensors.at("Q"), w.tensors.at("K"), w.tensors.at("V"), causal);
    std::vector<Expected> out = {{"O", std::move(f.o), 1e-2, 1e-2}};
    if (lse) out.push_back({"LSE", std::move(f.lse), 1e-4, 1e-4});
    return out;
  };
  return w;
}

TESSEL_REGISTER_KERNEL(flash_attention, MakeFlashAttention);

}  // namespace tessel::samples
