// Weight-only int4 GEMM (w4a16): C = A W^T with A [M, K] f16 activations,
// W [N, K] stored as 4-bit integers with one f16 scale per group of 128
// along K, f32 accumulation, C [M, N] f16.
//
// Storage (what PackInt4Weights writes):
//   Wq     [N, ceildiv(K, 8)] i32: word w of row n holds k = 8w + j in bits
//          4j .. 4j+3 (j = 0 lowest), as unsigned u in [0, 15]; no
//          interleaving, rows past K hold 0.
//   scales [ceildiv(K, 128), N] f16: scale of group k / 128 of row n (one
//          contiguous row of N per group, GPTQ's order).
//   W[n, k] = (u - 8) * scales[k / 128, n]  (symmetric int4, zero point 8).
//
// The kernel computes C^T = W A^T (w4a16_gemm_swap.h): the packed words,
// A's tile and the scales arrive asynchronously (on sm_90a from a
// warp-specialized TMA producer; cp.async on sm_80), each thread turns the
// words into f16 in registers with the exponent trick: (u | 0x6400) read as
// f16 (T::bitcast) is 1024 + u, minus 1032 is u - 8, exactly; that
// fragment is the register A operand of T::gemm (wgmma / mma.sync), A's
// tile the shared B, so each weight is dequantized once for up to 128
// rows of A. The scales multiply each group's f32 product where a second
// f32 tile fits (32 accumulators a thread), else the dequantized values.
// swap_ab = false keeps the first form (W through a shared B tile).
//
//   tessel::samples::W4A16Config c{.M = 16, .N = 8192, .K = 8192};
//   absl::StatusOr<tessel::Program> p = tessel::samples::W4A16GemmProgram(c);
//   // parameters: A [M, K] f16, Wq, scales (as above), C [M, N] f16.
//
// Registered for tessel-warmup as "w4a16_gemm" with params M, N, K and
// optional block_m, block_n, num_stages, threads, swap_ab (0 or 1).
#ifndef TESSEL_SAMPLES_W4A16_GEMM_H_
#define TESSEL_SAMPLES_W4A16_GEMM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

inline constexpr int kW4A16GroupSize = 128;

struct W4A16Tile {
  int block_m = 64;
  int block_n = 128;
  int num_stages = 4;
  int threads = 128;
  // The swapped form (w4a16_gemm_swap.h): W's tile the register A operand
  // of C^T's gemm, A's the shared B. false: the first form, W dequantized
  // into a shared B tile (LegacyW4A16Tile).
  bool swap_ab = true;
};

// The tile for M rows (block_k is the group, 128), the swapped form:
// block_n = 64 rows of W (one m64 per warpgroup of 128 threads), block_m
// the rows of A padded to 16, 32, 64 or 128 (the wgmma / mma.sync N), so
// each weight is dequantized once for M <= 128:
//   M <= 16: 16 x 64, 8 stages (N = 8192 gives 128 blocks);
//   M <= 64: 32 / 64 x 64, 6 stages;
//   above:   128 x 64, 4 stages, the scales in the dequant loop (no
//            second 64-register f32 tile).
// For sm_<sm> (0: sm_80's 163 KB fits) the stages are cut to what its
// shared memory holds.
W4A16Tile DefaultW4A16Tile(int64_t M, int sm = 0);

// The first form's tile (swap_ab false) for comparison:
//   M <= 16: 16 x 64, 256 threads, 6 stages (the small-M padding; two
//            consumer warpgroups; N = 8192 gives 128 blocks);
//   M <= 64: 64 x 32, 128 threads, 4 stages (256 blocks at N = 8192);
//   above:   128 x 64, 256 threads, 3 stages (4 on Hopper's 227 KB).
W4A16Tile LegacyW4A16Tile(int64_t M, int sm = 0);

// Shared memory of the tile: the staged A, packed weight and scale tiles,
// and the dequantized f16 tile.
int64_t W4A16SharedBytes(const W4A16Tile& tile);

struct W4A16Config {
  int M = 0;
  int N = 0;
  int K = 0;
  W4A16Tile tile = {};
  bool default_tile = true;  // true: DefaultW4A16Tile(M), `tile` ignored
};

// The tile program; InvalidArgument for a bad size or tile.
absl::StatusOr<Program> W4A16GemmProgram(const W4A16Config& config);

// Packs u [N, K] (row-major, each in [0, 15]) into Wq as above.
HostTensor PackInt4Weights(const std::vector<uint8_t>& u, int64_t N, int64_t K);

// W [N, K] in float64 from Wq and scales (the reference's weights, and
// what the peer multiplies by).
std::vector<double> DequantizeInt4Weights(const HostTensor& wq,
                                          const HostTensor& scales, int64_t N,
                                          int64_t K);

// Random A, random 4-bit weights and scales (seeded), C zeroed, one step,
// the float64 reference A W^T.
absl::StatusOr<Workload> W4A16GemmWorkload(const W4A16Config& config,
                                           uint64_t seed = 1);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_W4A16_GEMM_H_
