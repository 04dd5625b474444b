// DeepSeek MLA decode (FlashMLA's shape): one query token per sequence,
// 128 query heads against one latent key / value head of d_qk = 576 (512
// latent + 64 rope) columns, values the latent's first d_v = 512 columns of
// the same cache rows, a paged cache (page size 64) reached through a block
// table, lengths read on the device. One block per (64 query heads,
// sequence); the heads are the rows of S = Q K^T and O += P V.
//
//   tessel::samples::MlaDecodeConfig c{.B = 64, .max_pages = 64};
//   absl::StatusOr<tessel::Program> p = MlaDecodeProgram(c);
//   // parameters: Q [B, H, d_qk]; KV_cache [cache_rows, d_qk] (the
//   // [num_pages, page_size, d_qk] cache seen flat, cache_rows symbolic);
//   // block_table [B, max_pages] i32; seq_lens [B] i32; O [B, H, d_v]
//
// A sequence of length 0 gets an output of zeros. Registered for
// tessel-warmup as "mla_decode" (params B, H, d_qk, d_v, page_size,
// max_pages, dtype, block_h, block_n, num_stages, threads,
// v_split, splits).
#ifndef TESSEL_SAMPLES_MLA_DECODE_H_
#define TESSEL_SAMPLES_MLA_DECODE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct MlaDecodeConfig {
  int B = 2;
  int H = 128;
  int d_qk = 576;
  int d_v = 512;
  int page_size = 64;
  int max_pages = 4;
  DataType dtype = bf16;  // Q, the cache and O: bf16 or f16
  // 64 heads over two warpgroups (256 threads: acc_o [64, 512] f32 is 128
  // registers a thread); 32 keys a step in two stages: about 150 KB of
  // shared memory at d_qk 576 (Q 72 KB, two key tiles of 36 KB), one block
  // an SM on Hopper.
  int block_h = 64;
  int block_n = 32;
  int num_stages = 2;
  int threads = 256;
  // Blocks that share one (64 heads, sequence), each computing S = Q K^T
  // again and its d_v / v_split columns of O. At 1 (256 threads) the two
  // warpgroups split N on sm_90a: each holds S [64, block_n / 2] and O
  // [64, 256], both gemms on wgmma, the row max and sum meeting in shared
  // memory; at 2 with 128 threads one warpgroup holds [64, 256] and
  // computes all of S, for 576 more multiply-adds per key and head.
  int v_split = 1;
  // Blocks per (head block, sequence), each a range of the keys (split-KV):
  // they write f32 partial outputs O_partial [B, H / block_h, splits,
  // block_h, d_v] and LSE_partial [B, H / block_h, block_h, splits], which
  // decode_attention's combine kernel (MlaDecodeCombineProgram) merges.
  int splits = 1;
};

absl::StatusOr<Program> MlaDecodeProgram(const MlaDecodeConfig& config);
// The splits' combine (config.splits > 1): O [B, 1, H, d_v] (O seen with a
// query-token dim) from the partial outputs.
absl::StatusOr<Program> MlaDecodeCombineProgram(const MlaDecodeConfig& config);

// Random Q and cache, sequences of `lens` on shuffled pages, the float64
// reference (scores scaled by 1 / sqrt(d_qk)). Records: kernel
// "mla_decode", size "B64 L4096 H128", bytes = the cache rows read once.
absl::StatusOr<Workload> MlaDecodeWorkload(MlaDecodeConfig config,
                                           const std::vector<int>& lens,
                                           uint64_t seed);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_MLA_DECODE_H_
