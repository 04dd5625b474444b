// fp8 (e4m3) flash attention forward, FlashAttention-3's: Q, K, V in e4m3
// with per-head descale factors (descale_q / descale_k / descale_v [B, H]
// f32, the real values are x * descale), S = Q K^T on e4m3 wgmma with f32
// accumulation, the online softmax in f32 (the q and k descales folded into
// its exp2 scale), P quantized to e4m3 for O += P V on e4m3 wgmma, O in
// bf16 (times descale_v over the row's sum).
//
// clang-format off
//   tessel::samples::Fp8FlashAttentionConfig c{.B = 4, .S = 4096, .H = 16,
//                                              .D = 128, .causal = true};
//   absl::StatusOr<tessel::Program> t = Fp8TransposeVProgram(c);
//   // V [B, S, H, D] e4m3 -> Vt [B, H, D, VtKeys(S)] e4m3
//   absl::StatusOr<tessel::Program> a = Fp8FlashAttentionProgram(c);
//   // Q, K [B, S, H, D] e4m3, Vt, descale_q, descale_k, descale_v [B, H]
//   // f32, O [B, S, H, D] bf16
// clang-format on
//
// fp8 wgmma reads both operands K-major: P V's K is the keys, so V must
// sit in shared memory as [D, keys]. The sample takes V^T from a small
// tessel kernel that runs first (timed with the attention as one workload):
// a memory-bound pass over V (1/3 of the inputs' bytes, ~2 % of the
// attention's time at 16k tokens), where FlashAttention-3 transposes each
// tile in its producer warps. A KV cache can store V this way once.
// P goes to the consumers' shared memory as e4m3 (the f32 accumulator's
// register layout is not wgmma's A layout for 8-bit types; fp8 A is read
// from shared memory here).
//
// sm_90a only: the registered factories ("flash_attention_fp8",
// "fp8_transpose_v") refuse other archs (fp8 tensor cores are wgmma in
// tessel; elsewhere the gemms would be FMA loops).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_FP8_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_FP8_H_

#include <cstdint>
#include <source_location>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct Fp8FlashAttentionConfig {
  int B = 1;
  int S = 128;
  int H = 1;
  int D = 128;  // 128 or 256
  bool causal = false;
  // 128 query rows over two consumer warpgroups, 128 keys a step.
  int block_m = 128;
  int block_n = 128;
  int num_stages = 2;
  int threads = 256;
};

// Vt's key axis: S rounded up to 16 (its rows' TMA stride, 16-byte
// multiples); the transpose writes zeros past S.
int64_t VtKeys(int64_t S);

// V [B, S, H, D] -> Vt [B, H, D, VtKeys(S)], both e4m3.
absl::StatusOr<Program> Fp8TransposeVProgram(
    const Fp8FlashAttentionConfig& config,
    std::source_location loc = std::source_location::current());

// The attention kernel (parameters as above); InvalidArgument naming `loc`
// for a bad size or tile.
absl::StatusOr<Program> Fp8FlashAttentionProgram(
    const Fp8FlashAttentionConfig& config,
    std::source_location loc = std::source_location::current());

// Random e4m3 Q, K, V and descales, the transpose step then the attention
// (main step), checked against float64 attention of the dequantized
// inputs.
absl::StatusOr<Workload> Fp8FlashAttentionWorkload(
    const Fp8FlashAttentionConfig& config, uint64_t seed = 1);

// The float64 reference: attention of q * descale_q, k * descale_k,
// v * descale_v (per batch and head), O [B, S, H, D] f64; with round_p the
// probabilities (over the row's max) rounded to e4m3 before P V, as the
// kernel's P V sees them.
HostTensor ReferenceFp8Attention(const HostTensor& q, const HostTensor& k,
                                 const HostTensor& v, const HostTensor& dq,
                                 const HostTensor& dk, const HostTensor& dv,
                                 bool causal, bool round_p);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_FP8_H_
