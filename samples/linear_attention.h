// Causal (unnormalised) linear attention, the seed's fused-chunk kernels:
//   O = scale * tril(Q K^T) V,  scale = 1 / sqrt(DK),
// computed chunk by chunk with a DK x DV state per (batch, head). Q, K
// [B, S, H, DK], V, dO [B, S, H, DV], f16.
//
//   tessel::samples::LinearAttentionConfig c{.B = 8, .S = 4096, .H = 16,
//                                            .DK = 128, .DV = 128};
//   absl::StatusOr<tessel::Program> fwd = LinearAttentionForwardProgram(c);
//   absl::StatusOr<tessel::Program> bwd = LinearAttentionBackwardProgram(c);
//   absl::StatusOr<Workload> w = LinearAttentionBackwardWorkload(c);
//
// One block owns a (DV tile, DK tile, batch*head). Forward: O is a sum over
// the DK tiles; with one DK tile (block_k >= DK) the kernel writes O in f16,
// otherwise it adds f32 tiles with atomic_add. Backward: dQ and dK are sums
// over the DV tiles and dV over the DK tiles; a gradient whose sum has one
// tile is written in f16, the others are added into f32 with atomic_add.
// The host wrappers (the *Workload functions) zero the f32 tensors, run the
// kernel(s) and convert them to f16, as the seed's tl_fused_chunk_bwd. The
// chunk loops are software-pipelined (num_stages): the copies of chunk i+1
// overlap the gemms of chunk i.
// The mbarrier variant of the forward hands each chunk from its load stage
// to its compute stage with explicit mbarrier_arrive / mbarrier_wait_parity
// inside a 2-stage Pipelined loop, with TMA lowering and warp
// specialisation switched off (the seed's fused_chunk_kernel).
//
// Registered for tessel-warmup as "linear_attention_fwd",
// "linear_attention_fwd_mbarrier", "linear_attention_bwd",
// "linear_attention_bwd_dq", "linear_attention_bwd_dkdv",
// "linear_attention_chunk_states" and "linear_attention_chunk_output" (params
// B, S, H, DK, DV, chunk, block_k, block_v, threads, num_stages).
#ifndef TESSEL_SAMPLES_LINEAR_ATTENTION_H_
#define TESSEL_SAMPLES_LINEAR_ATTENTION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/compile.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct LinearAttentionConfig {
  int B = 1;
  int S = 128;
  int H = 2;
  int DK = 64;
  int DV = 64;
  int chunk = 64;    // sequence rows per step
  int block_k = 64;  // DK tile of one block
  int block_v = 64;  // DV tile of one block
  int threads = 128;
  int num_stages = 2;  // chunk-loop pipeline depth; 0 or 1 = serial
  // Backward workloads: the two sweeps as two kernels (the split form)
  // rather than the fused kernel.
  bool split_backward = true;
  // Forward + backward workloads: the forward also writes its final state
  // and the backward is one reverse sweep from it (with one tile over DK
  // and DV of at most 64 x 64; else the two sweeps as above).
  bool state_backward = true;
};

// Parameters Q, K, V (f16), O (f16 with one DK tile; otherwise f32, zeroed:
// atomics add into it).
absl::StatusOr<Program> LinearAttentionForwardProgram(
    const LinearAttentionConfig& config);
// The same computation with explicit mbarriers between load and compute.
absl::StatusOr<Program> LinearAttentionForwardMbarrierProgram(
    const LinearAttentionConfig& config);
// fla's chunked forward in two kernels. States: parameters K, V (f16),
// States (f16 [B*H*NT, DK, DV], NT = ceil(S / chunk)); a pipelined sweep per
// (DV tile, DK tile, batch*head) stores scale * the state before each chunk.
// Output: parameters Q, K, V, States, O (f16); one block per (DV tile,
// chunk, batch*head), all chunks in parallel; it holds all of DK.
absl::StatusOr<Program> LinearAttentionChunkStatesProgram(
    const LinearAttentionConfig& config);
absl::StatusOr<Program> LinearAttentionChunkOutputProgram(
    const LinearAttentionConfig& config);
// The pass config the mbarrier variant is compiled with (as the seed's).
PassConfig LinearAttentionMbarrierPassConfig();
// Parameters Q, K, V, dO (f16), dQ, dK, dV (f16 when one tile owns the sum,
// else f32, zeroed): both sweeps in one block, one after the other (the
// seed's fused kernel).
absl::StatusOr<Program> LinearAttentionBackwardProgram(
    const LinearAttentionConfig& config);
// The split form, the same parameters: the dQ sweep alone, and the dK/dV
// sweep alone. Each holds half the tiles, so more blocks fit on an SM, and
// the two run as two kernels.
absl::StatusOr<Program> LinearAttentionBackwardDqProgram(
    const LinearAttentionConfig& config);
absl::StatusOr<Program> LinearAttentionBackwardDkDvProgram(
    const LinearAttentionConfig& config);
// The forward that also writes its final state State (f32 [B*H, DK, DV]),
// and the backward in one reverse sweep from it (Q, K, V, dO, State ->
// dQ, dK, dV in f16; one tile over DK and DV).
absl::StatusOr<Program> LinearAttentionForwardWithStateProgram(
    const LinearAttentionConfig& config);
absl::StatusOr<Program> LinearAttentionBackwardFromStateProgram(
    const LinearAttentionConfig& config);

// Tensors Q, K, V and O (f16, the output). With one DK tile the only step is
// the forward; otherwise O_acc (f32) too and the steps zero O_acc, forward,
// cast to O.
absl::StatusOr<Workload> LinearAttentionForwardWorkload(
    const LinearAttentionConfig& config, bool mbarrier_variant = false,
    uint64_t seed = 1);
// The chunked forward: tensors Q, K, V, States and O (f16); steps: states,
// output.
absl::StatusOr<Workload> LinearAttentionChunkedForwardWorkload(
    const LinearAttentionConfig& config, uint64_t seed = 1);

// Tensors Q, K, V, dO and dQ, dK, dV (f16, the outputs); for each gradient
// summed over several tiles an accumulator (dQ_acc ..., f32) with a zeroing
// step before the backward and a cast after it.
absl::StatusOr<Workload> LinearAttentionBackwardWorkload(
    const LinearAttentionConfig& config, uint64_t seed = 1);

// Forward then backward on the same Q, K, V (what a training step runs;
// fla's fwd+bwd peers): the two wrappers' steps in order.
absl::StatusOr<Workload> LinearAttentionForwardBackwardWorkload(
    const LinearAttentionConfig& config, uint64_t seed = 1);
// The same with the backward's own tiles (its sizes must match).
absl::StatusOr<Workload> LinearAttentionForwardBackwardWorkload(
    const LinearAttentionConfig& fwd_config,
    const LinearAttentionConfig& bwd_config, uint64_t seed);

// Float64 references from the tensors' values.
HostTensor ReferenceLinearAttentionForward(const HostTensor& q,
                                           const HostTensor& k,
                                           const HostTensor& v);
struct LinearAttentionGrads {
  HostTensor dq, dk, dv;
};
LinearAttentionGrads ReferenceLinearAttentionBackward(const HostTensor& q,
                                                      const HostTensor& k,
                                                      const HostTensor& v,
                                                      const HostTensor& d_o);

// The default tile for sm_<sm> (0: the CPU) of the tiles left 0: one block
// owns all of DK and DV (the forward writes O and the backward its
// gradients in f16: no atomics, no wrapper), with 8 warps when the states
// are 128 x 128 (swept on the H200: at D = 128 the forward takes 0.19 ms
// this way, 0.21 ms with DV tiles of 64); where those tiles do not fit the
// shared memory (D = 128 on sm_86, sm_89, sm_120), tiles of 64 and 4 warps.
LinearAttentionConfig WithDeviceTile(LinearAttentionConfig c, int sm);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_LINEAR_ATTENTION_H_
