// Flash attention backward, TileLang-style (its example_mha_bwd): dQ, dK, dV
// from Q, K, V, O, dO and the forward's log-sum-exp, causal or full, with
// grouped-query heads.
//
//   1. flash_attention_bwd_preprocess: Delta = rowsum(dO * O) and LSE2 =
//      LSE log2(e), f32 [B, H, Sp] (S padded to whole 128-byte rows, which
//      the TMA needs; the padding is 0); dQ_acc (below) zeroed.
//   2. flash_attention_bwd[_gqa][_causal]: one block per (key tile, kv
//      head, batch) loops over the query tiles (and, with grouped heads,
//      over the group's query heads): P^T and dS^T are recomputed from
//      Q K^T and the LSE, dK and dV summed in register fragments and
//      written once, dQ added into an f32 buffer with atomic_add.
//   3. the host wrapper casts that buffer to f16 (samples/tensor_ops.h).
//
//   FlashAttentionBackwardConfig c{.B = 8, .S = 4096, .H = 16, .D = 128};
//   absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c);
//
// Parameters: preprocess (O, dO [B, S, H, D] f16, LSE [B, H, S] f32, Delta,
// LSE2 [B, H, Sp] f32, dQ_acc [B, S, H, D] f32); main (Q [B, S, H, D], K, V [B,
// S, Hkv, D], dO, LSE2, Delta, dQ_acc [B, S, H, D] f32, dK, dV [B, S, Hkv, D]
// f16). Registered for tessel-warmup as "flash_attention_bwd" (params B, S, H,
// D, heads_kv, causal, block_m, block_n, num_stages, threads, dq_first,
// dq_registers, mask_diagonal_only, dq_pad, overlap, dv_early, longest_first;
// without block_m, block_n and threads, the target's tile: WithDeviceTile) and
// "flash_attention_bwd_preprocess" (B, S, H, D).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_BWD_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_BWD_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/flash_attention.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct FlashAttentionBackwardConfig {
  int B = 1;
  int S = 128;
  int H = 2;
  int D = 64;
  int heads_kv = 0;  // 0 or H: multi-head; else a divisor of H
  bool causal = false;
  int block_m = 64;  // key rows of one block (its dK, dV tile)
  // Query rows per loop step; 0: block_m (at least 64) at D <= 64, else
  // block_m / 2 (at least 32).
  int block_n = 0;
  int num_stages = 2;
  int threads = 128;
  // dQ's gemm before dV's and dK's (beside them on the tensor cores, with
  // more registers live) instead of after.
  bool dq_first = false;
  // dQ added to dQ_acc by atomics straight from its gemm's registers (as
  // FlashAttention 2) instead of through shared memory (vector atomics
  // after a barrier). Needs dQ untransposed: block_n a multiple of 64 per
  // consumer warpgroup (the D64 tile).
  bool dq_registers = false;
  // Causal: the mask only on the steps that cross the diagonal (a uniform
  // branch per step); the others compute P^T unmasked.
  bool mask_diagonal_only = false;
  // f32 columns of padding per row of dQ's shared tile: its stores from
  // the gemm's registers (dQ^T's transposed ones at D128) hit 4-8 rows of
  // one bank at a time without (4 at D128, 8 at D64 take every bank).
  int dq_pad = 0;
  // An order / stage list for the step (stage 0 all; not with dq_first):
  // each wgmma stays in flight until a statement needs it, so P^T's exp
  // runs under dP^T's gemm, dV's and dK's gemms share one wait, and dS^T's
  // copy to shared memory moves before them.
  bool overlap = false;
  // With overlap: P^T's cast and dV's gemm before dS^T's math, which then
  // runs under dV's gemm (dP^T's wait leaves it in flight); dK after the
  // copy of dS^T, as without it.
  bool dv_early = false;
  // sm_90a: dQ's shared tile added to dQ_acc as bulk reductions, one per
  // row from the TMA unit (PassConfig::bulk_reduce_atomics on the main
  // step), instead of every thread's vector atomics; not with dq_registers.
  bool dq_bulk = false;
  // sm_90a: the main step's wgmma groups on TMA-written tiles stay in
  // flight across its barriers (PassConfig::wgmma_across_barriers on the
  // main step): with dv_early, dK's gemm runs on while dQ's waits for the
  // other warpgroup's dS^T.
  bool across_barriers = false;
  // Causal: the key tiles with the most query tiles launched first
  // (samples/attention_grid.h).
  bool longest_first = true;
};

// The backward of a forward config's sizes (heads, causal), default tiles.
FlashAttentionBackwardConfig BackwardOf(const FlashAttentionConfig& forward);

// The tile for an sm_<sm> device: on sm_90 (HopperSharedMemory)
// FlashAttention 3's shape, 128
// keys per block and 64 queries per step at D128 (128 at D <= 64), two
// consumer warpgroups; the warp-specialized lowering gives them a TMA
// producer; at D128 with its schedule (dq_pad 4, overlap, mask on the
// diagonal's steps only), which the H200 measured fastest. The defaults
// (64 keys, 4 warps) fit sm_80's shared memory.
FlashAttentionBackwardConfig WithDeviceTile(FlashAttentionBackwardConfig c,
                                            int sm);

// S rounded up to the preprocess's rows (32): the length of Delta and LSE2.
int PaddedSeqLen(const FlashAttentionBackwardConfig& config);

absl::StatusOr<Program> FlashAttentionBackwardPreprocessProgram(
    const FlashAttentionBackwardConfig& config);

absl::StatusOr<Program> FlashAttentionBackwardProgram(
    const FlashAttentionBackwardConfig& config);

// The pass config the workload compiles the main step with (dq_bulk,
// across_barriers); samples/kernels.json lists its entries with the same.
PassConfig BackwardMainPassConfig(const FlashAttentionBackwardConfig& config);

// Random Q, K, V, dO; O and LSE from the float64 forward; the three steps
// (preprocess with dQ_acc zeroed, main, cast dQ); checked against the float64
// gradients.
absl::StatusOr<Workload> FlashAttentionBackwardWorkload(
    const FlashAttentionBackwardConfig& config, uint64_t seed = 1);

// The forward with its LSE (forward.lse is set), then the backward's steps
// on its O and LSE; checks O, LSE, dQ, dK and dV.
absl::StatusOr<Workload> FlashAttentionForwardBackwardWorkload(
    const FlashAttentionConfig& forward,
    const FlashAttentionBackwardConfig& backward, uint64_t seed = 1);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_BWD_H_
