// Variable-length flash attention forward (FlashAttention's cu_seqlens form):
// a batch of sequences of different lengths packed along one token axis, no
// padding. Sequence b owns tokens cu_seqlens[b] .. cu_seqlens[b + 1] - 1 of
// Q, K, V and O; attention (causal or full) stays within each sequence.
//
//   tessel::samples::FlashAttentionConfig c{.B = 3, .S = 1000, .H = 16,
//                                           .D = 128, .causal = true};
//   absl::StatusOr<tessel::Program> p = FlashAttentionVarlenProgram(c);
//   // parameters: Q, O [total, H, D]; K, V [total, Hkv, D]; cu_seqlens
//   // [B + 1] i32; with .lse = true also LSE [H, total] f32. total is
//   // symbolic (bound at launch): one compiled kernel serves every batch of
//   // B sequences of at most S tokens (S = max_seqlen bounds the grid).
//
// The grid is ceildiv(S, block_m) x H x B; a block whose query tile starts
// past its sequence's end exits at once. Keys past the sequence's end (the
// next sequence's, or zeros past the tensor) are masked in the scores; rows
// of O and LSE past the end are not stored (a guarded element-wise store, as
// TileLang's varlen example does: a tile copy only clips at the tensor's
// edge, and would overwrite the next sequence's rows).
//
// Registered for tessel-warmup as "flash_attention_varlen" (params B, S,
// H, D, heads_kv, causal, lse and the tile, as flash_attention).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/flash_attention.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// c.B sequences of at most c.S tokens each.
absl::StatusOr<Program> FlashAttentionVarlenProgram(
    const FlashAttentionConfig& config);

// flash_attention_varlen[_gqa][_lse][_causal].
std::string FlashAttentionVarlenName(const FlashAttentionConfig& config);

// Random Q, K, V packed from `seqlens` (config's B and S become their count
// and maximum), plus `pad` tokens after the last sequence that belong to no
// sequence (their O / LSE stay at a sentinel: a store past a sequence's end
// shows); one step; float64 reference per sequence.
absl::StatusOr<Workload> FlashAttentionVarlenWorkload(
    FlashAttentionConfig config, const std::vector<int>& seqlens,
    uint64_t seed = 1, int pad = 0);

// "1,17,300" -> {1, 17, 300}: lengths of 0 or more (an empty sequence
// owns no tokens).
absl::StatusOr<std::vector<int>> ParseSeqlens(const std::string& text);

// The sequences' start offsets along the packed token axis, with the total
// last ({0, s0, s0+s1, ...}); InvalidArgument naming `kernel` for no
// sequences, a negative length or padding, or more tokens (with `pad`
// padding tokens after them) than int32 offsets hold.
absl::StatusOr<std::vector<int64_t>> CumulativeSeqlens(
    const std::string& kernel, const std::vector<int>& seqlens, int pad);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_VARLEN_H_
