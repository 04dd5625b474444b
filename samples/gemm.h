// GEMM: C = op(A) op(B), f16 / bf16 / fp8 (e4m3, e5m2) inputs, f32
// accumulation, f16 / bf16 / f32 output, any of the layouts NN, NT, TN, TT,
// any sizes (ragged edges follow the boundary rule: zeros read, stores
// skipped). fp8 runs on the tensor cores (wgmma k32, sm_90a) in the NT
// layout only (A [M, K], B [N, K]: wgmma reads fp8 K-major); the other
// layouts and archs run it as FMA loops (CompiledKernel::schedule() says
// why).
//
//   tessel::samples::GemmConfig c{.M = 4096, .N = 4096, .K = 4096,
//                                 .in_dtype = tessel::bf16,
//                                 .layout = tessel::samples::GemmLayout::kNT};
//   absl::StatusOr<tessel::Program> p = tessel::samples::GemmProgram(c);
//   // parameters: A, B, C; A is [M, K] (N) or [K, M] (T), B is [K, N] (N)
//   // or [N, K] (T), C is [M, N].
//
// Registered for tessel-warmup as "gemm" with params M, N, K and optional
// in_dtype, out_dtype, layout ("NN"...), block_m, block_n, block_k,
// num_stages, threads, panel, split_k (its partial-sums kernel; the reduce
// is "gemm_split_k_reduce", gemm_k_slices.h), bias_relu, pad_rows (A and B
// of padded rows; the copy is "gemm_pad_rows", gemm_padded_rows.h).
#ifndef TESSEL_SAMPLES_GEMM_H_
#define TESSEL_SAMPLES_GEMM_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// First letter: A, second: B. N = stored as the product reads it, T = stored
// transposed (TileLang's trans_A / trans_B).
enum class GemmLayout { kNN, kNT, kTN, kTT };
std::string_view GemmLayoutName(GemmLayout layout);
absl::StatusOr<GemmLayout> ParseGemmLayout(std::string_view name);
inline bool TransposedA(GemmLayout l) {
  return l == GemmLayout::kTN || l == GemmLayout::kTT;
}
inline bool TransposedB(GemmLayout l) {
  return l == GemmLayout::kNT || l == GemmLayout::kTT;
}

// The defaults are the fastest tile measured on the H200 with mma.sync (8
// warps as 4x2, each 64x64; docs/prelude.md), and they fit every arch's
// shared memory (the warmup manifest compiles them for sm_80 and sm_90a).
// On sm_90a the tile takes wgmma: each of the two warpgroups owns 128 rows
// (docs/scheduler.md). DefaultGemmTile gives the best tile of an arch.
struct GemmTile {
  int block_m = 256;
  int block_n = 128;
  int block_k = 64;
  int num_stages = 3;
  int threads = 256;
  int panel = 8;  // T::use_swizzle panel size; 0: plain raster order
  // K slices (gemm_k_slices.h): > 1 runs a block per (output tile, slice)
  // into f32 partial sums, then a kernel that adds them.
  int split_k = 1;
  // sm_90a: PassConfig::pingpong_consumers, two consumer warpgroups taking
  // alternate tiles (threads must be 128: one warpgroup's tile).
  bool pingpong = false;
  // sm_90a: PassConfig::cluster_size, blocks in pairs along M that share
  // B's tile, each loading half of it for both (TMA multicast).
  int cluster = 1;
  // sm_90a: false sets PassConfig::disable_persistent_grid (one block per
  // output tile instead of one per SM looping over the tiles).
  bool persistent = true;
  // An operand whose rows are not 16 bytes apart (the TMA refuses it) is
  // first copied into a workspace of padded rows (gemm_padded_rows.h); the
  // table sets it on sm_90 and later.
  bool pad_rows = false;
};

// The default tile for sm_<sm> (samples/gemm_tile.cc): on sm_90 and later
// 128x256x64 in 4 stages (192 KB of shared memory): each consumer
// warpgroup of the warp-specialized kernel runs one m64n256k16 wgmma per
// k16 step (8d2b18f:bench/results/h200_s6_*); elsewhere GemmTile{}, or
// 128x128x32 in 4 stages where its 144 KB do not fit (sm_86, sm_89, sm_120).
// fp8 inputs take twice the block_k, the same 128-byte rows (128x256x128,
// m64n256k32; 256x128x128 in 3 stages, 144 KB, elsewhere). Given the problem's
// M x N (and K), a table picks by how many waves of `sms` SMs the blocks fill:
// 128x128 tiles in 6 stages when 128x256 tiles fill less than one wave (at
// 512x4096x4096 0.031 ms against 0.048, 8d2b18f:bench/results/h200_s7/), and
// 256x128 tiles for shapes ragged in both M and N (3000x5000x4000). K is
// split only when asked (split_k): by default it lost (1000^3).
GemmTile DefaultGemmTile(int sm, DataType in_dtype = f16, int64_t M = 0,
                         int64_t N = 0, int64_t K = 0, int sms = 132);

// The tile of the ping-pong schedule (GemmTile::pingpong) on sm_90:
// 128x128x64 in 6 stages, one consumer warpgroup's tile (128 accumulator
// registers a thread), two warpgroups taking turns; elsewhere
// DefaultGemmTile (the option does nothing there).
GemmTile PingpongGemmTile(int sm, DataType in_dtype = f16);

struct GemmConfig {
  int M = 0;
  int N = 0;
  int K = 0;
  DataType in_dtype = f16;
  DataType out_dtype = f16;
  GemmLayout layout = GemmLayout::kNN;
  GemmTile tile;
  // The fused epilogue C = relu(op(A) op(B) + bias[j]), bias [N] of
  // in_dtype (a parameter between B and C).
  bool bias_relu = false;
  // sm_90a: PassConfig::disable_tma_store_epilogue, C stored through a shared
  // staging tile and the TMA (src/passes/epilogue_store.h).
  bool tma_store = true;
};

// The tile program; InvalidArgument for a bad size, dtype or tile.
absl::StatusOr<Program> GemmProgram(const GemmConfig& config);

// Random A and B (seeded), C zeroed, one step (two with split K: the
// gemm, then the reduce), and the float64 reference.
absl::StatusOr<Workload> GemmWorkload(const GemmConfig& config,
                                      uint64_t seed = 1);

// C = op(A) op(B) in float64 from A and B as stored (layout as above).
HostTensor ReferenceGemm(const HostTensor& a, const HostTensor& b,
                         GemmLayout layout);

// Absolute and relative tolerance of an output of `dtype` summing K
// products of values in [-1, 1].
double GemmTolerance(DataType out_dtype);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_GEMM_H_
