// Split-K for the GEMM sample (gemm.h): when a problem has too few output
// tiles to fill the GPU, GemmTile::split_k > 1 cuts K into slices. The gemm
// kernel then runs one block per (output tile, K slice) and stores each
// slice's f32 partial sums into a workspace `partials` [slices, M, N] (no
// atomics: the sum is the same on every run); a second kernel adds the
// slices (and the bias + ReLU epilogue) and rounds to the output dtype.
// (splitk_gemm.h is another sample: its slices add into C with atomics.)
//
//   GemmConfig c{.M = 1000, .N = 1000, .K = 1000,
//                .tile = {.block_m = 128, .block_n = 128, .num_stages = 6,
//                         .split_k = 2}};
//   Program gemm = *GemmProgram(c);              // A, B, partials
//   Program reduce = *GemmSplitKReduceProgram(c);  // partials, [bias,] C
//
// GemmWorkload runs both. Registered for tessel-warmup as
// "gemm_split_k_reduce" with params M, N, K, split_k, block_k and optional
// in_dtype, out_dtype, bias_relu.
#ifndef TESSEL_SAMPLES_GEMM_K_SLICES_H_
#define TESSEL_SAMPLES_GEMM_K_SLICES_H_

#include "absl/status/statusor.h"
#include "samples/gemm.h"

namespace tessel::samples {

// The block_k steps of each K slice: the K steps shared out over
// tile.split_k slices, rounded up.
int GemmKStepsPerSlice(const GemmConfig& config);

// The K slices the gemm kernel runs: tile.split_k, less the slices that
// would start past K (10 steps in 4 slices are 3 + 3 + 3 + 1; 5 steps in 4
// are 2 + 2 + 1, three slices). 1: no split.
int GemmKSlices(const GemmConfig& config);

// C = sum of partials[s] over the slices (relu(. + bias[j]) with
// bias_relu), rounded to out_dtype. InvalidArgument when the config has
// one slice.
absl::StatusOr<Program> GemmSplitKReduceProgram(const GemmConfig& config);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_GEMM_K_SLICES_H_
