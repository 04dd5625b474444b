// Variable-length flash attention backward: dQ, dK, dV of packed sequences
// (flash_attention_varlen.h's layout: Q, dO, dQ [total, H, D], K, V, dK, dV
// [total, Hkv, D], cu_seqlens [B + 1] i32), from the varlen forward's O and
// LSE [H, total]. The fixed-length backward's two kernels
// (flash_attention_bwd.h) over BackwardRows' packed form:
//
//   1. flash_attention_varlen_bwd_preprocess: Delta = rowsum(dO * O), LSE2
//      = LSE log2(e), f32 [B, H, Sp] (Sp: the longest sequence rounded up
//      to 32 rows; sequence b's rows at [b, h, 0 ..], 0 past its end); the
//      sequences' rows of dQ_acc [total, H, D] f32 zeroed.
//   2. flash_attention_varlen_bwd[_gqa][_causal]: the grid is sized for the
//      longest sequence (c.S); key tiles past a sequence's end exit, keys
//      and queries past it are masked, dK / dV rows past it not stored.
//   3. dQ_acc cast to f16.
//
//   FlashAttentionBackwardConfig c{.H = 16, .D = 128, .causal = true};
//   absl::StatusOr<Workload> w =
//       FlashAttentionVarlenBackwardWorkload(c, {1, 17, 300});
//
// Registered for tessel-warmup as "flash_attention_varlen_bwd" (the params
// of flash_attention_bwd; B sequences of at most S tokens) and
// "flash_attention_varlen_bwd_preprocess" (B, S, H, D).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_BWD_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_BWD_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/flash_attention.h"
#include "samples/flash_attention_bwd.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// Parameters: O, dO, LSE, cu_seqlens, Delta, LSE2, dQ_acc.
absl::StatusOr<Program> FlashAttentionVarlenBackwardPreprocessProgram(
    const FlashAttentionBackwardConfig& config);

// Parameters: Q, K, V, dO, cu_seqlens, LSE2, Delta, dQ_acc, dK, dV.
absl::StatusOr<Program> FlashAttentionVarlenBackwardProgram(
    const FlashAttentionBackwardConfig& config);

// Random Q, K, V, dO packed from `seqlens` (0 allowed; config's B and S
// become their count and maximum) plus `pad` tokens of no sequence (their
// gradients stay at a sentinel); O and LSE from the float64 forward, or
// with `forward` set, from the varlen forward (that config's heads, mask
// and tile; lse on) run first. Checked against the float64 gradients per
// sequence (and O, LSE after the forward).
absl::StatusOr<Workload> FlashAttentionVarlenBackwardWorkload(
    FlashAttentionBackwardConfig config, const std::vector<int>& seqlens,
    uint64_t seed = 1, int pad = 0,
    const FlashAttentionConfig* forward = nullptr);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_BWD_H_
