#include "samples/flash_attention_bwd.h"

#include "samples/flash_attention_bwd_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/attention_grid.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;
constexpr int kPreprocessRows = kBackwardPreprocessRows;

int KvHeads(const FlashAttentionBackwardConfig& c) {
  return c.heads_kv == 0 ? c.H : c.heads_kv;
}

int BlockN(const FlashAttentionBackwardConfig& c) {
  if (c.block_n > 0) return c.block_n;
  return c.D <= 64 ? std::max(64, c.block_m) : std::max(32, c.block_m / 2);
}

// dQ's gemm has bn rows, dQ^T's D: take the one whose rows split over the
// warpgroups (wgmma gives each 64 rows of the accumulator).
bool DqTransposed(const FlashAttentionBackwardConfig& c) {
  return BlockN(c) % (64 * std::max(1, c.threads / 128)) != 0;
}

absl::Status CheckConfig(const FlashAttentionBackwardConfig& c) {
  if (c.B <= 0 || c.S <= 0 || c.H <= 0 || c.D <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("flash_attention_bwd: sizes must be positive, got B=", c.B,
                     " S=", c.S, " H=", c.H, " D=", c.D));
  }
  // The gemms step over D in the tensor cores' k16, and dK / dV's columns
  // are split over the warps in 16s.
  if (c.D % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("flash_attention_bwd: D=", c.D,
                     " must be a multiple of 16 (e.g. 64, 96, 128)"));
  }
  if (c.heads_kv < 0 || (c.heads_kv > 0 && c.H % c.heads_kv != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("flash_attention_bwd: heads_kv=", c.heads_kv,
                     " must divide H=", c.H, " (0 means H)"));
  }
  if (c.block_m <= 0 || c.block_n < 0 || c.threads <= 0 || c.num_stages < 0 ||
      c.dq_pad < 0 || c.dq_pad % 4 != 0) {
    return absl::InvalidArgumentError(
        "flash_attention_bwd: block_m and threads must be positive, "
        "block_n and num_stages not negative, dq_pad a multiple of 4 (its "
        "rows stay 16-byte aligned for the vector atomics)");
  }
  if (c.H > 65535 || c.B > 65535) {
    return absl::InvalidArgumentError(
        "flash_attention_bwd: H and B must fit the grid's y / z limit "
        "(65535)");
  }
  return absl::OkStatus();
}

absl::StatusOr<Program> MakeBackward(const nlohmann::json& json,
                                     const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionBackwardConfig c,
                           BackwardMainConfigFromJson(json, target));
  return FlashAttentionBackwardProgram(c);
}

absl::StatusOr<Program> MakePreprocess(const nlohmann::json& json) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionBackwardConfig c,
                           BackwardConfigFromJson(json, /*tiles=*/false));
  return FlashAttentionBackwardPreprocessProgram(c);
}

}  // namespace

absl::StatusOr<FlashAttentionBackwardConfig> BackwardMainConfigFromJson(
    const nlohmann::json& json, const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionBackwardConfig c,
                           BackwardConfigFromJson(json, /*tiles=*/true));
  if (!json.contains("block_m") && !json.contains("block_n") &&
      !json.contains("threads")) {
    c = WithDeviceTile(c, target.sm());
  }
  return c;
}

absl::StatusOr<FlashAttentionBackwardConfig> BackwardConfigFromJson(
    const nlohmann::json& json, bool tiles) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  FlashAttentionBackwardConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.S, params.IntInRange("S", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.D, params.IntInRange("D", 1, 512));
  if (tiles) {
    SAMPLES_ASSIGN_OR_RETURN(c.heads_kv,
                             params.IntInRange("heads_kv", 0, kMax, 0));
    SAMPLES_ASSIGN_OR_RETURN(c.causal, params.Bool("causal", false));
    SAMPLES_ASSIGN_OR_RETURN(c.block_m,
                             params.IntInRange("block_m", 1, 256, c.block_m));
    SAMPLES_ASSIGN_OR_RETURN(c.block_n,
                             params.IntInRange("block_n", 0, 256, c.block_n));
    SAMPLES_ASSIGN_OR_RETURN(
        c.num_stages, params.IntInRange("num_stages", 0, 8, c.num_stages));
    SAMPLES_ASSIGN_OR_RETURN(c.threads,
                             params.IntInRange("threads", 32, 1024, c.threads));
    SAMPLES_ASSIGN_OR_RETURN(c.dq_first, params.Bool("dq_first", c.dq_first));
    SAMPLES_ASSIGN_OR_RETURN(c.dq_registers,
                             params.Bool("dq_registers", c.dq_registers));
    SAMPLES_ASSIGN_OR_RETURN(
        c.mask_diagonal_only,
        params.Bool("mask_diagonal_only", c.mask_diagonal_only));
    SAMPLES_ASSIGN_OR_RETURN(c.dq_pad,
                             params.IntInRange("dq_pad", 0, 64, c.dq_pad));
    SAMPLES_ASSIGN_OR_RETURN(c.overlap, params.Bool("overlap", c.overlap));
    SAMPLES_ASSIGN_OR_RETURN(c.dv_early, params.Bool("dv_early", c.dv_early));
    SAMPLES_ASSIGN_OR_RETURN(c.longest_first,
                             params.Bool("longest_first", c.longest_first));
  }
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return c;
}

FlashAttentionBackwardConfig BackwardOf(const FlashAttentionConfig& f) {
  return {.B = f.B,
          .S = f.S,
          .H = f.H,
          .D = f.D,
          .heads_kv = f.heads_kv,
          .causal = f.causal};
}

int PaddedSeqLen(const FlashAttentionBackwardConfig& c) {
  return (c.S + kPreprocessRows - 1) / kPreprocessRows * kPreprocessRows;
}

FlashAttentionBackwardConfig WithDeviceTile(FlashAttentionBackwardConfig c,
                                            int sm) {
  if (HopperSharedMemory(sm) && c.D <= 128) {
    c.block_m = 128;
    c.block_n = 0;
    c.threads = 256;
    // H200, B8 S4096 H16 D128, backward alone: full 7.277 ms -> 6.659
    // with the padding (6.691 with the overlap too), causal 4.114 -> 3.807
    // with all three (8d2b18f:bench/results/h200_s9/). H32 D64, the same
    // schedule (dQ rows padded by 8): full 7.979 -> 7.155, causal 4.557
    // -> 4.231 (8d2b18f:bench/results/h200_s10/call3_flash_compile/).
    c.dq_pad = c.D > 64 ? 4 : 8;
    c.overlap = !c.dq_first;
    c.mask_diagonal_only = true;
    // dQ by bulk reductions (a pass option of the main step): D128 full
    // 6.807 -> 6.595 ms, causal 3.836 -> 3.788 (same call).
    c.dq_bulk = !c.dq_registers;
    // Causal D128: dV's gemm before dS^T's math and the groups across the
    // barriers, 3.538 -> 3.433 ms (full: 6.319 -> 6.404, kept as it is;
    // D64 causal with dv_early alone 4.228 -> 4.160, full 6.960 -> 8.069;
    // 8d2b18f:bench/results/h200_s14/).
    if (c.causal && c.D > 64 && c.overlap)
      c.dv_early = c.across_barriers = true;
  }
  return c;
}

Expr BackwardRows::length() const {
  if (!packed()) return S;
  return cu_seqlens(batch + 1) - cu_seqlens(batch);
}

BufferRef BackwardRows::Tile(const Buffer& x, const Slice& rows,
                             const Expr& head) const {
  if (!packed()) return x(batch, rows, head, T::all);
  const Expr start = cu_seqlens(batch);
  return x(T::slice(start + rows.start, start + rows.stop), head, T::all);
}

BufferRef BackwardRows::LseRow(const Buffer& lse, const Expr& head,
                               const Slice& rows) const {
  if (!packed()) return lse(batch, head, rows);
  const Expr start = cu_seqlens(batch);
  return lse(head, T::slice(start + rows.start, start + rows.stop));
}

void BackwardRows::Store(const Buffer& fragment, const Buffer& x,
                         const Slice& rows, const Expr& head) const {
  if (!packed()) {
    T::copy(fragment, x(batch, rows, head, T::all));
    return;
  }
  const Expr start = cu_seqlens(batch);
  const Expr n = length();
  // The bounds on start + row keep a malformed cu_seqlens inside x.
  for (auto [i, j] : T::Parallel(fragment.shape()[0], fragment.shape()[1])) {
    const Expr row = rows.start + i;
    T::If(row < n && start + row >= 0 && start + row < total,
          [&] { x(start + row, head, j) = fragment(i, j); });
  }
}

void BackwardPreprocessBlock(const FlashAttentionBackwardConfig& c,
                             const BackwardPreprocessTensors& t,
                             const BackwardRows& r, const Expr& bx,
                             const Expr& by) {
  const int rows = kBackwardPreprocessRows, D = c.D;
  // Straight from global memory into registers: each row's sum is the
  // threads' own products, then shuffles.
  auto o = T::alloc_fragment({rows, D}, f16, "o");
  auto d_o = T::alloc_fragment({rows, D}, f16, "do");
  auto acc = T::alloc_fragment({rows, D}, f32, "acc");
  auto delta = T::alloc_fragment({rows}, f32, "delta");
  auto lse = T::alloc_fragment({rows}, f32, "lse");
  const Expr bz = r.batch;
  auto tile = T::slice(bx * rows, (bx + 1) * rows);
  T::copy(r.Tile(t.O, tile, by), o);
  T::copy(r.Tile(t.dO, tile, by), d_o);
  for (auto [i, j] : T::Parallel(rows, D)) {
    acc(i, j) = T::cast(o(i, j), f32) * T::cast(d_o(i, j), f32);
  }
  T::reduce_sum(acc, delta, {.dim = 1});
  // Packed: rows past the sequence's end read the next sequence's O and
  // LSE; they get 0 as the fixed-length padding does.
  auto past_end = [&](const Buffer& x) {
    if (!r.packed()) return;
    for (auto i : T::Parallel(rows))
      x(i) = T::select(bx * rows + i < r.length(), x(i), 0.0f);
  };
  past_end(delta);
  // Rows past S (the padding) read zeros: Delta 0 and LSE 0 there.
  T::copy(delta, t.Delta(bz, by, tile));
  T::copy(r.LseRow(t.LSE, by, tile), lse);
  for (auto i : T::Parallel(rows)) lse(i) = lse(i) * kLog2e;
  past_end(lse);
  T::copy(lse, t.LSE2(bz, by, tile));
  // The main kernel adds dQ into dQ_acc: zero its rows here, a pass over
  // memory fewer than a kernel of its own.
  T::clear(acc);
  r.Store(acc, t.dQ_acc, tile, by);
}

absl::StatusOr<Program> FlashAttentionBackwardPreprocessProgram(
    const FlashAttentionBackwardConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const int rows = kPreprocessRows, D = c.D, Sp = PaddedSeqLen(c);
  T::ProgramBuilder p("flash_attention_bwd_preprocess");
  BackwardPreprocessTensors t;
  t.O = p.tensor("O", {c.B, c.S, c.H, D}, f16);
  t.dO = p.tensor("dO", {c.B, c.S, c.H, D}, f16);
  t.LSE = p.tensor("LSE", {c.B, c.H, c.S}, f32);
  t.Delta = p.tensor("Delta", {c.B, c.H, Sp}, f32);
  t.LSE2 = p.tensor("LSE2", {c.B, c.H, Sp}, f32);
  t.dQ_acc = p.tensor("dQ_acc", {c.B, c.S, c.H, D}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.S, rows), c.H, c.B, {.threads = 128});
    auto [bx, by, bz] = kernel.block_index();
    BackwardPreprocessBlock(c, t, BackwardRows{.batch = bz, .S = c.S}, bx, by);
  }
  return p.finish();
}

// The step's order / stage lists with c.overlap: the four loads are the
// producer's (-1); the compute statements keep their order but for dS^T's
// copy to shared memory, which moves before dV's and dK's gemms (then the
// barrier in front of dQ's gemm retires both with one wait).
T::PipelineOptions StepPipeline(const FlashAttentionBackwardConfig& c) {
  T::PipelineOptions o{.num_stages = c.num_stages, .name = "it"};
  if (!c.overlap) return o;
  // S^T, dP^T, P^T, dS^T, P^T's cast, dV, dK, dS^T's copy, dQ, [dQ's
  // store to shared,] atomic add.
  const int compute = c.dq_registers ? 10 : 11;
  o.order = {-1, -1, -1, -1};
  o.stage = {-1, -1, -1, -1};
  // The place of each compute statement: dV (5) and dK (6) after the copy
  // (7); with dv_early, P^T's cast (4) and dV's gemm (5) before dS^T (3),
  // then the copy, then dK.
  const std::vector<int> place = c.dv_early
                                     ? std::vector<int>{0, 1, 2, 5, 3, 4, 7, 6}
                                     : std::vector<int>{0, 1, 2, 3, 4, 6, 7, 5};
  for (int i = 0; i < compute; ++i) {
    o.order.push_back(i < static_cast<int>(place.size()) ? place[i] : i);
    o.stage.push_back(0);
  }
  return o;
}

absl::Status CheckBackwardMainConfig(const FlashAttentionBackwardConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  if (c.dv_early && !c.overlap) {
    return absl::InvalidArgumentError(
        "flash_attention_bwd: dv_early is an order of the overlapped step; "
        "it needs overlap");
  }
  if (c.overlap && c.dq_first) {
    return absl::InvalidArgumentError(
        "flash_attention_bwd: overlap orders the step for dQ's gemm after "
        "dV's and dK's; it does not take dq_first");
  }
  const int bn = BlockN(c);
  if (c.dq_bulk && c.dq_registers) {
    return absl::InvalidArgumentError(
        "flash_attention_bwd: dq_bulk adds dQ from its shared tile; it does "
        "not take dq_registers");
  }
  if (c.dq_registers && DqTransposed(c)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flash_attention_bwd: dq_registers needs block_n (", bn,
        ") a multiple of 64 per consumer warpgroup (threads=", c.threads,
        "): dQ^T's registers do not map onto dQ's rows"));
  }
  return absl::OkStatus();
}

void BackwardMainBlock(const FlashAttentionBackwardConfig& c,
                       const BackwardMainTensors& t, const BackwardRows& r,
                       const Expr& bx, const Expr& by) {
  const int bm = c.block_m, bn = BlockN(c), D = c.D, Hkv = KvHeads(c);
  const int group = c.H / Hkv;
  const double sm_scale = 1.0 / std::sqrt(static_cast<double>(D));
  const double scale = sm_scale * kLog2e;  // exp(x / sqrt(D)) = exp2(x scale)
  const bool dq_transposed = DqTransposed(c);
  const Expr bz = r.batch;
  auto K_shared = T::alloc_shared({bm, D}, f16, "K_shared");
  auto V_shared = T::alloc_shared({bm, D}, f16, "V_shared");
  auto q = T::alloc_shared({bn, D}, f16, "q");
  auto d_o = T::alloc_shared({bn, D}, f16, "do");
  auto lse = T::alloc_shared({bn}, f32, "lse");
  auto delta = T::alloc_shared({bn}, f32, "delta");
  auto qkT = T::alloc_fragment({bm, bn}, f32, "qkT");
  auto dsT = T::alloc_fragment({bm, bn}, f32, "dsT");
  auto qkT_cast = T::alloc_fragment({bm, bn}, f16, "qkT_cast");
  auto dsT_cast = T::alloc_fragment({bm, bn}, f16, "dsT_cast");
  auto dsT_shared = T::alloc_shared({bm, bn}, f16, "dsT_shared");
  auto dk = T::alloc_fragment({bm, D}, f32, "dk");
  auto dv = T::alloc_fragment({bm, D}, f32, "dv");
  auto dq = dq_transposed ? T::alloc_fragment({D, bn}, f32, "dqT")
                          : T::alloc_fragment({bn, D}, f32, "dq");
  auto dq_shared = c.dq_registers
                       ? T::Buffer()
                       : T::alloc_shared({bn, D + c.dq_pad}, f32, "dq_shared");
  auto dq_tile = [&] { return dq_shared(T::all, T::slice(0, D)); };
  auto body = [&] {
    auto keys = T::slice(bx * bm, (bx + 1) * bm);
    T::copy(r.Tile(t.K, keys, by), K_shared);
    T::copy(r.Tile(t.V, keys, by), V_shared);
    T::clear(dk);
    T::clear(dv);
    // Causal: query tiles that end before the block's first key see none
    // of its keys.
    const T::Expr q_tiles = T::ceildiv(r.length(), bn);
    const T::Expr first = c.causal ? (bx * bm) / bn : T::Expr(0);
    // Grouped heads: one loop over (query head of the group, query tile),
    // so dK and dV of the shared key / value head stay in registers.
    const T::Expr steps = group == 1 ? q_tiles : group * (q_tiles - first);
    const T::Expr start = group == 1 ? first : T::Expr(0);
    for (auto it : T::Pipelined(start, steps, StepPipeline(c))) {
      const T::Expr head =
          group == 1 ? T::Expr(by) : by * group + it / (q_tiles - first);
      const T::Expr k =
          group == 1 ? T::Expr(it) : first + it % (q_tiles - first);
      auto queries = T::slice(k * bn, (k + 1) * bn);
      // The step's tiles first: on sm_90a they are what the producer loads.
      T::copy(r.Tile(t.Q, queries, head), q);
      T::copy(r.Tile(t.dO, queries, head), d_o);
      T::copy(t.LSE2(bz, head, queries), lse);
      T::copy(t.Delta(bz, head, queries), delta);
      // S^T = K Q^T and dP^T = V dO^T, then the elementwise work on both.
      T::gemm(K_shared, q, qkT,
              {.transpose_B = true,
               .clear_accum = true,
               .policy = T::GemmWarpPolicy::kFullRow});
      T::gemm(V_shared, d_o, dsT,
              {.transpose_B = true,
               .clear_accum = true,
               .policy = T::GemmWarpPolicy::kFullRow});
      // P^T = exp(S^T / sqrt(D) - LSE), zero above the diagonal; packed,
      // also zero for keys or queries past the sequence's end (another
      // sequence's), so they add nothing to dQ, dK or dV.
      auto probabilities = [&](bool masked) {
        for (auto [i, j] : T::Parallel(bm, bn)) {
          T::Expr p_ij = T::exp2(qkT(i, j) * scale - lse(j));
          const T::Expr key = bx * bm + i, query = k * bn + j;
          T::Expr visible = key <= query;
          if (r.packed()) {
            const T::Expr inside = query < r.length();
            visible =
                c.causal ? (visible && inside) : (key < r.length() && inside);
          }
          qkT(i, j) = masked ? T::select(visible, p_ij, 0.0f) : p_ij;
        }
      };
      // Packed: the tile's last keys or queries may lie past the end.
      const T::Expr ragged =
          (bx + 1) * bm > r.length() || (k + 1) * bn > r.length();
      if (c.causal && c.mask_diagonal_only) {
        // A step whose first query is at or past the block's last key sees
        // every key.
        T::Expr crosses = k * bn < (bx + 1) * bm - 1;
        if (r.packed()) crosses = crosses || ragged;
        T::If(crosses, [&] { probabilities(true); }).Else([&] {
          probabilities(false);
        });
      } else if (r.packed() && !c.causal && c.mask_diagonal_only) {
        T::If(ragged, [&] { probabilities(true); }).Else([&] {
          probabilities(false);
        });
      } else {
        probabilities(c.causal || r.packed());
      }
      // dS^T = P^T (dP^T - Delta) / sqrt(D).
      for (auto [i, j] : T::Parallel(bm, bn)) {
        dsT_cast(i, j) = qkT(i, j) * (dsT(i, j) - delta(j)) * sm_scale;
      }
      // dQ = dS K (or dQ^T = K^T dS^T), summed over the key blocks by
      // atomics. Both its operands are in shared memory: issued first, it
      // runs on the tensor cores beside dV's gemm (more live registers).
      auto dq_gemm = [&] {
        T::copy(dsT_cast, dsT_shared);
        if (dq_transposed) {
          T::gemm(K_shared, dsT_shared, dq,
                  {.transpose_A = true,
                   .clear_accum = true,
                   .policy = T::GemmWarpPolicy::kFullRow});
        } else {
          T::gemm(dsT_shared, K_shared, dq,
                  {.transpose_A = true,
                   .clear_accum = true,
                   .policy = T::GemmWarpPolicy::kFullRow});
        }
      };
      T::copy(qkT, qkT_cast);
      if (c.dq_first) dq_gemm();
      T::gemm(qkT_cast, d_o, dv, {.policy = T::GemmWarpPolicy::kFullRow});
      T::gemm(dsT_cast, q, dk, {.policy = T::GemmWarpPolicy::kFullRow});
      if (!c.dq_first) dq_gemm();
      // Packed: the rows of queries past the end get zeros (their dS^T
      // columns are 0).
      if (c.dq_registers) {
        T::atomic_add(r.Tile(t.dQ_acc, queries, head), dq);
      } else if (dq_transposed) {
        for (auto [i, j] : T::Parallel(D, bn)) dq_shared(j, i) = dq(i, j);
      } else {
        T::copy(dq, dq_tile());
      }
      if (!c.dq_registers)
        T::atomic_add(r.Tile(t.dQ_acc, queries, head), dq_tile());
    }
    r.Store(dk, t.dK, keys, by);
    r.Store(dv, t.dV, keys, by);
  };
  // Packed: the grid is sized for the longest sequence; a key tile past
  // this one's end exits at once.
  if (r.packed()) {
    T::If(bx * bm < r.length(), body);
  } else {
    body();
  }
}

absl::StatusOr<Program> FlashAttentionBackwardProgram(
    const FlashAttentionBackwardConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckBackwardMainConfig(c));
  const int bm = c.block_m, D = c.D, Hkv = KvHeads(c);
  const int group = c.H / Hkv;
  T::ProgramBuilder p(absl::StrCat("flash_attention_bwd",
                                   group > 1 ? "_gqa" : "",
                                   c.causal ? "_causal" : ""));
  BackwardMainTensors t;
  t.Q = p.tensor("Q", {c.B, c.S, c.H, D}, f16);
  t.K = p.tensor("K", {c.B, c.S, Hkv, D}, f16);
  t.V = p.tensor("V", {c.B, c.S, Hkv, D}, f16);
  t.dO = p.tensor("dO", {c.B, c.S, c.H, D}, f16);
  // Rows padded to whole 128-byte lines: the TMA loads their tiles.
  t.LSE2 = p.tensor("LSE2", {c.B, c.H, PaddedSeqLen(c)}, f32);
  t.Delta = p.tensor("Delta", {c.B, c.H, PaddedSeqLen(c)}, f32);
  t.dQ_acc = p.tensor("dQ_acc", {c.B, c.S, c.H, D}, f32);
  t.dK = p.tensor("dK", {c.B, c.S, Hkv, D}, f16);
  t.dV = p.tensor("dV", {c.B, c.S, Hkv, D}, f16);
  {
    const AttentionGrid grid((c.S + bm - 1) / bm, Hkv, c.B,
                             c.causal && c.longest_first);
    T::Kernel kernel(grid.x(), grid.y(), grid.z(), {.threads = c.threads});
    auto [block_x, block_y, block_z] = kernel.block_index();
    // The key tile (its rank: tile 0 runs the most query tiles), the key /
    // value head, the batch.
    const auto [bx, by, bz] = grid.Block(block_x, block_y, block_z);
    BackwardMainBlock(c, t, BackwardRows{.batch = bz, .S = c.S}, bx, by);
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(flash_attention_bwd, MakeBackward);
TESSEL_REGISTER_KERNEL(flash_attention_bwd_preprocess, MakePreprocess);

}  // namespace tessel::samples
