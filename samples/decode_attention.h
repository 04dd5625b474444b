// Paged-KV decode attention, split-KV (FlashDecoding): each sequence has
// one query token (or a few, speculative decode), its keys and values live
// in pages of a shared cache reached through a block table, and its length
// is read from device memory. One block handles one (split, kv head,
// sequence): the query heads of one group (grouped-query attention) and the
// query tokens are the rows of its gemms, its keys a range of the
// sequence's pages. A second kernel combines the splits' partial outputs by
// their log-sum-exp.
//
// clang-format off
//   tessel::samples::DecodeAttentionConfig c{.B = 64, .H = 32,
//                                            .heads_kv = 8, .D = 128,
//                                            .page_size = 16,
//                                            .max_pages = 256, .splits = 4};
//   absl::StatusOr<tessel::Program> attn = DecodeAttentionProgram(c);
//   absl::StatusOr<tessel::Program> comb = DecodeCombineProgram(c);
// clang-format on
//
// Parameters of decode_attention (in order):
//   Q           [B, q_len, H, D]            f16 / bf16
//   K_cache     [cache_rows, Hkv, D]: vLLM's [num_pages, page_size, Hkv, D]
//   V_cache     seen flat (cache_rows = num_pages * page_size, symbolic,
//               bound at launch); dtype or fp8_e4m3
//   block_table [B, max_pages]  i32: page p of sequence b is rows
//               block_table[b, p] * page_size + [0, page_size) of the cache
//   seq_lens    [B]             i32: keys of each sequence (0 allowed)
//   kv_scale    [2]  f32        fp8 caches only: K and V dequant scales
//   then, with one split: O [B, q_len, H, D] (the dtype of Q);
//   with several: O_partial [B, Hkv, splits, rows, D] f32 and
//   LSE_partial [B, Hkv, rows, splits] f32 (rows = q_len * H / Hkv; row
//   t * group + g is query token t of head kv_head * group + g), which
//   decode_attention_combine (parameters O_partial, LSE_partial, O) reduces.
//
// Query token t of a sequence of length L sits at position L - q_len + t
// and sees the keys before and at it (causal within the speculated tokens).
// A query that sees no key (L = 0, or L < q_len) gets an output of zeros.
//
// Registered for tessel-warmup as "decode_attention" and
// "decode_attention_combine" (params B, q_len, H, heads_kv, D, page_size,
// max_pages, splits, dtype, kv_dtype, block_n, block_m, num_stages,
// threads).
#ifndef TESSEL_SAMPLES_DECODE_ATTENTION_H_
#define TESSEL_SAMPLES_DECODE_ATTENTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tessel/tessel.h"

namespace tessel::samples {

struct DecodeAttentionConfig {
  int B = 2;
  int q_len = 1;     // query tokens per sequence (2-4: speculative decode)
  int H = 8;         // query heads
  int heads_kv = 2;  // key / value heads dividing H (0: H, multi-head)
  int D = 128;
  int page_size = 16;
  int max_pages = 8;        // block table width: the longest sequence's pages
  int splits = 1;           // blocks per (sequence, kv head), each a page range
  DataType dtype = f16;     // Q and O: f16 or bf16
  DataType kv_dtype = f16;  // the cache: dtype, or fp8_e4m3 (with kv_scale)
  // Keys per pipelined step (several pages at page size 16; a page's part
  // at larger pages): a multiple of page_size or a divisor of it.
  int block_n = 64;
  // Rows of the query tile (0: the group's rows, q_len * H / Hkv, which the
  // scheduler pads to the tensor cores' tile itself below 64; from 64 on,
  // rounded up to a multiple of 64).
  int block_m = 0;
  // Three stages keep two steps of keys and values (64 KB at D128 f16) in
  // flight per block while one is computed: 112 KB of shared memory.
  int num_stages = 3;
  int threads = 128;
};

// Key / value heads (heads_kv, or H when 0) and query rows of one block
// (q_len * H / Hkv, before padding).
int DecodeKvHeads(const DecodeAttentionConfig& config);
int DecodeRows(const DecodeAttentionConfig& config);
// block_m, or its default.
int DecodeBlockM(const DecodeAttentionConfig& config);

// The default split count over `sms` SMs of `blocks_per_sm` resident
// blocks (two at the default tile's 99 KB of shared memory and 160 threads
// on Hopper): of 1 to min(64, steps of the longest sequence) splits, the one
// whose busiest slot runs the fewest steps, waves x (ceil(steps / splits)
// + 2) (waves = ceil(B * heads_kv * splits / slots); 2 steps: a block's
// pipeline fill and drain and its partial rows); ties go to the fewest
// splits (less to combine). Whole waves of equal blocks win: one sequence
// of 512 steps over 8 kv heads on 132 SMs takes 32 splits (256 blocks of 16
// steps, one wave), not 30 (29 blocks of 18 steps and one of 10).
int DecodeSplits(const DecodeAttentionConfig& config, int sms,
                 int blocks_per_sm = 2);

absl::Status CheckDecodeAttentionConfig(const DecodeAttentionConfig& config);

// decode_attention[_gqa|_mqa][_fp8][_q<q_len>][_split]
std::string DecodeAttentionName(const DecodeAttentionConfig& config);

absl::StatusOr<Program> DecodeAttentionProgram(
    const DecodeAttentionConfig& config);
// The splits' combine (config.splits > 1).
absl::StatusOr<Program> DecodeCombineProgram(
    const DecodeAttentionConfig& config);

absl::StatusOr<DecodeAttentionConfig> DecodeAttentionConfigFromJson(
    const nlohmann::json& json);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_DECODE_ATTENTION_H_
