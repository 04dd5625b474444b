// RMSNorm over the rows of X (or of X + R with .residual): Y[i, j] =
// X[i, j] * W[j] / sqrt(mean_j X[i, j]^2 + eps), f16 or bf16 in and out,
// f32 inside. One block owns block_m rows and
// walks the columns in block_n chunks twice (sum of squares with
// reduce_sum, then the scaled store); when a row fits one chunk it is loaded
// once.
//
//   tessel::samples::RmsNormConfig c{.M = 4096, .N = 8192};
//   absl::StatusOr<tessel::Program> p = tessel::samples::RmsNormProgram(c);
//   // parameters: X [M, N], (R [M, N] with .residual), W [N], Y [M, N]
//
// Registered for tessel-warmup as "rmsnorm" (params M, N, dtype, eps,
// residual, block_m, block_n, threads, grid, keep_dtype, prefetch, w_shared).
#ifndef TESSEL_SAMPLES_RMSNORM_H_
#define TESSEL_SAMPLES_RMSNORM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct RmsNormConfig {
  int M = 0;
  int N = 0;
  DataType dtype = f16;
  double eps = 1e-6;
  bool residual = false;  // RMSNorm(X + R): R [M, N] after X
  // 0: the default (samples/row_tile.h).
  int block_m = 0;
  int block_n = 0;
  int threads = 0;
  // 0: one block per row tile; else this many blocks, each looping over
  // row tiles (samples/row_params.h, ForEachRowTile).
  int grid = 0;
  // Keep the loaded rows in the input dtype (half the registers of f32),
  // widened where used; with a residual, X + R is rounded to it.
  bool keep_dtype = false;
  // With grid > 0 and one chunk per row: load the block's next row tile
  // while it reduces and stores this one (two row tiles in registers).
  bool prefetch = false;
  // With grid > 0 and one chunk per row: W goes to shared memory once per
  // block and each row tile reads it from there (not W in registers for
  // the whole loop, nor from L2 per row).
  bool w_shared = false;
};

absl::StatusOr<Program> RmsNormProgram(const RmsNormConfig& config);
absl::StatusOr<Workload> RmsNormWorkload(const RmsNormConfig& config,
                                         uint64_t seed = 1);
HostTensor ReferenceRmsNorm(const HostTensor& x, const HostTensor& w,
                            double eps);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_RMSNORM_H_
