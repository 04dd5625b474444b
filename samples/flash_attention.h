// Flash attention forward, TileLang-style: one block per (query tile, head,
// batch), K/V tiles streamed through a Pipelined loop, an online softmax
// with reduce_max / reduce_sum (running max, rescaled accumulator, running
// sum), causal or full, any head dim the tiles fit (64 and 128 tested), any
// sequence length (keys past the end are masked).
//
//   tessel::samples::FlashAttentionConfig c{.B = 8, .S = 4096, .H = 16,
//                                           .D = 128, .causal = true};
//   absl::StatusOr<tessel::Program> p = FlashAttentionProgram(c);
//   // parameters: Q, K, V, O, each [B, S, H, D] f16
//
// Registered for tessel-warmup as "flash_attention" (params B, S, H, D,
// causal, block_m, block_n, num_stages, threads, p_in_registers).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct FlashAttentionConfig {
  int B = 1;
  int S = 128;
  int H = 2;
  int D = 64;
  bool causal = false;
  // The defaults are the fastest D=128 tiles the cp.async path gave on the
  // H200 (tools/dev/results/flash_attention_sweep_h200.txt): 4 warps of 32
  // query rows each, 255 registers without spills. On sm_90 the sample's GPU
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
};

// The tile for sm_<sm>: on sm_90 and later, D <= 128, 128 x 128 over two
// consumer warpgroups (256 threads), at D <= 64 192 x 128 over three (384),
// which the scheduler warp-specializes: a TMA producer fills K and V
// (B8 S4096 H16 D128: 2.08 ms against 4.82 with the default tile; H32 D64:
// 2.37 ms against 2.80 with 128 x 128; bench/results/h200_s7/); elsewhere
// the defaults above.
FlashAttentionConfig WithDeviceTile(FlashAttentionConfig c, int sm);

absl::StatusOr<Program> FlashAttentionProgram(
    const FlashAttentionConfig& config);

// Random Q, K, V; O zeroed; one step; float64 softmax attention reference.
absl::StatusOr<Workload> FlashAttentionWorkload(
    const FlashAttentionConfig& config, uint64_t seed = 1);

// softmax(Q K^T / sqrt(D) [+ causal mask]) V in float64, [B, S, H, D].
HostTensor ReferenceAttention(const HostTensor& q, const HostTensor& k,
                              const HostTensor& v, bool causal);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_H_
