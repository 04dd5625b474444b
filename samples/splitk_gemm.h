// Split-K GEMM: the K loop is cut into split_k slices, one per grid z; each
// block adds its partial C tile into C (f32) with atomic_add. The host wrapper
// (SplitKGemmWorkload) zeroes C first. The GEMM sample's own split-K, with
// no atomics (partial sums, then a reduce kernel), is gemm_k_slices.h.
//
//   tessel::samples::SplitKConfig c{.M = 1024, .N = 1024, .K = 16384,
//                                   .split_k = 8};
//   absl::StatusOr<tessel::Program> p = tessel::samples::SplitKGemmProgram(c);
//   // parameters: A [M, K], B [K, N] (in_dtype), C [M, N] f32, zeroed
//
// Registered for tessel-warmup as "splitk_gemm" (params M, N, K, split_k,
// in_dtype, block_m, block_n, block_k, num_stages, threads).
#ifndef TESSEL_SAMPLES_SPLITK_GEMM_H_
#define TESSEL_SAMPLES_SPLITK_GEMM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/gemm.h"
#include "samples/workload.h"

namespace tessel::samples {

struct SplitKConfig {
  int M = 0;
  int N = 0;
  int K = 0;
  int split_k = 4;
  DataType in_dtype = f16;
  GemmTile tile = {.block_m = 64,
                   .block_n = 64,
                   .block_k = 32,
                   .num_stages = 2,
                   .threads = 128};
};

absl::StatusOr<Program> SplitKGemmProgram(const SplitKConfig& config);

// Steps: zero C, the split-K kernel. Reference: float64 GEMM.
absl::StatusOr<Workload> SplitKGemmWorkload(const SplitKConfig& config,
                                            uint64_t seed = 1);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_SPLITK_GEMM_H_
