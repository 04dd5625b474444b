// Flash attention forward, TileLang-style: one block per (query tile, head,
// batch), K/V tiles streamed through a Pipelined loop, an online softmax
// with reduce_max / reduce_sum (running max, rescaled accumulator, running
// sum), causal or full, any head dim the tiles fit (64 and 128 tested), any
// sequence length (keys past the end are masked).
//
//   tessel::samples::FlashAttentionConfig c{.B = 8, .S = 4096, .H = 16,
//                                           .D = 128, .causal = true};
//   absl::StatusOr<tessel::Program> p = FlashAttentionProgram(c);
//   // parameters: Q, O [B, S, H, D]; K, V [B, S, Hkv, D] (Hkv = heads_kv,
//   // or H); with .lse = true also LSE [B, H, S] f32
//
// Grouped-query heads: Hkv key / value heads dividing H, query head h reads
// key / value head h / (H / Hkv) (Hkv = 1: multi-query).
//
// Registered for tessel-warmup as "flash_attention" (params B, S, H, D,
// heads_kv, causal, lse, block_m, block_n, num_stages, threads,
// p_in_registers, overlap, align_end, mask_after).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "samples/workload.h"
#include "tessel/registry.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct FlashAttentionConfig {
  int B = 1;
  int S = 128;
  int H = 2;
  int D = 64;
  // Key / value heads: 0 or H is multi-head attention, else a divisor of H.
  int heads_kv = 0;
  bool causal = false;
  // Also write the log-sum-exp of each query row (natural log of the
  // softmax's denominator, scores scaled by 1/sqrt(D)), f32 [B, H, S]: what
  // the backward needs.
  bool lse = false;
  // The defaults are the fastest D=128 tiles the cp.async path gave on the
  // H200 (8d2b18f:tools/dev/results/flash_attention_sweep_h200.txt): 4 warps of
  // 32 query rows each, 255 registers without spills. On sm_90 the sample's GPU
  // backend takes WithDeviceTile (below) instead.
  int block_m = 128;  // query rows of one block
  int block_n = 32;   // key rows per loop step
  int num_stages = 2;
  int threads = 128;
  // Keep P (the f16 probabilities) in registers as the A operand of the
  // P V gemm, as TileLang's example does (the accumulator layout of Q K^T is
  // the mma A layout of P V when each warp owns whole rows), instead of
  // going through shared memory.
  bool p_in_registers = true;
  // FlashAttention-3's intra-warpgroup overlap, through the Pipelined
  // loop's order / stage lists: P V of key block k - 1 runs one iteration
  // late, issued right after Q K^T of block k, so that the tensor cores
  // work on it while the softmax of block k runs; the rescale of the output
  // waits for it. Acts on the warp-specialized sm_90a path (elsewhere the
  // loop runs in its sequential order, the same result).
  bool overlap = false;
  // Causal, S not a multiple of block_m: the query tiles end at multiples of
  // block_m from the sequence's end, so the ragged tile is the first one
  // (the fewest key blocks), clamped to row 0, instead of the last one (the
  // most). B8 S4096 with 192-row tiles: 363 tile steps per head instead of
  // 385.
  bool align_end = false;
  // S = Q K^T overwrites its accumulator (wgmma scale-d 0) and the blocks
  // that cross the diagonal or the sequence's end are masked after the gemm
  // (FlashAttention-3's order), instead of the scores starting at 0 / -inf
  // and the gemm adding to them (TileLang's).
  bool mask_after = false;
  // sm_90a: the consumer warpgroups take turns at the gemms
  // (PassConfig::consumer_gemm_turns, FlashAttention-3's warp scheduler
  // barrier): a pass option of the workload's step, not part of the
  // program.
  bool gemm_turns = false;
};

// The tile for sm_<sm>: where Hopper's shared memory is (sm_90, sm_100;
// HopperSharedMemory), D <= 128, 128 x 128 over two
// consumer warpgroups (256 threads), at D <= 64 192 x 128 over three (384),
// which the scheduler warp-specializes: a TMA producer fills K and V
// (B8 S4096 H16 D128: 2.08 ms against 4.82 with the default tile; H32 D64:
// 2.37 ms against 2.80 with 128 x 128; 8d2b18f:bench/results/h200_s7/);
// elsewhere the defaults above. With overlap, three K / V stages: P V holds its
// stage one iteration longer.
FlashAttentionConfig WithDeviceTile(FlashAttentionConfig c, int sm);

// Whether the device tile overlaps when the user does not say: on sm_90 at
// 64 < D <= 128. On the H200 (B8 S4096 H16 D128) it took the forward from
// 2.060 to 1.860 ms full and 1.147 to 1.102 causal; at D64 it lost (2.342 ->
// 2.421 full with three consumer warpgroups, 2.527 on two). The
// variable-length forward (8 sequences, 32768 tokens, H16 D128) follows:
// 3.124 -> 3.009 ms full, 1.743 -> 1.680 causal.
bool DeviceOverlap(const FlashAttentionConfig& c, int sm);

// Whether the device tile of a causal forward takes align_end and
// mask_after when the user does not say: on sm_90 at D <= 64 (the 192-row
// tile, no overlap). On the H200 (B8 S4096 H32 D64 causal) the pair took
// 1.520 -> 1.362 ms (1.455 align_end alone, 1.441 mask_after alone;
// 8d2b18f:bench/results/h200_s10/call3_flash_compile/). The variable-length
// forward keeps its order (it has neither).
bool DeviceEndAlignedMask(const FlashAttentionConfig& c, int sm);

absl::StatusOr<Program> FlashAttentionProgram(
    const FlashAttentionConfig& config);

// The forward's Pipelined options: stages, and with overlap the order /
// stage lists of its body statements (13; 12 with mask_after and no mask).
PipelineOptions FlashPipeline(const FlashAttentionConfig& config);

// The forward's tiles, allocated in this order (the shared-memory plan
// follows it): Q, K, V in shared memory, the scores, P, the output and the
// online softmax's row statistics ([block_m] fragments).
struct FlashBuffers {
  Buffer Q_shared, K_shared, V_shared, acc_s, acc_s_cast, acc_o;
  Buffer scores_max, scores_max_prev, scores_scale, scores_sum, logsum;
};
FlashBuffers AllocFlashBuffers(const FlashAttentionConfig& config);

// The running row statistics of the online softmax ([block_m] fragments).
struct OnlineSoftmax {
  Buffer max, max_prev, scale, sum, logsum;
};

// One key block of the flash forward after its scores acc_s = Q K^T
// ([bm, bn]; acc_o is [bm, D]): the running max takes the block, acc_o and
// logsum are rescaled, P = exp2((s - max) * scale) is cast into p (a masked
// key's -inf gives 0), and acc_o += P V. The forward and the
// variable-length forward share it.
void SoftmaxTimesV(const Buffer& acc_s, const Buffer& p, const Buffer& V_shared,
                   const Buffer& acc_o, const OnlineSoftmax& softmax, int bm,
                   int bn, int D, double scale);

// Key / value heads of the config (heads_kv, or H when 0).
int KvHeads(const FlashAttentionConfig& config);

// A forward's tile params (block_m, block_n, num_stages, threads) from its
// manifest entry, each left as it is when the entry has none.
absl::Status ReadForwardTile(const KernelParams& params, int& block_m,
                             int& block_n, int& num_stages, int& threads);

// Sizes, tiles and heads a kernel can take; errors start with `kernel`.
absl::Status CheckFlashAttentionConfig(const FlashAttentionConfig& config,
                                       const std::string& kernel);

// A config from the registry's parameters (the forward's and the
// variable-length forward's: B, S, H, D, heads_kv, causal, lse, tiles).
absl::StatusOr<FlashAttentionConfig> FlashAttentionConfigFromJson(
    const nlohmann::json& json);

// The forward's program (and the workload's kernel) name:
// flash_attention[_gqa][_lse][_causal].
std::string FlashAttentionName(const FlashAttentionConfig& config);

// Random Q, K, V; O zeroed (and LSE); one step; float64 reference.
// The bench label of a config's pass ("fwd", "bwd", "fwd+bwd"): sizes
// "B8 S4096 H32 Hkv8 D128" with grouped-query heads.
BenchLabel FlashAttentionLabel(const FlashAttentionConfig& config,
                               std::string pass);

absl::StatusOr<Workload> FlashAttentionWorkload(
    const FlashAttentionConfig& config, uint64_t seed = 1);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_H_
