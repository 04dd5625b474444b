// LayerNorm over the rows of X, optionally after a residual add:
//   h = X + R (or X),  Y[i, j] = (h[i, j] - mean_i) * rstd_i * W[j] + B[j],
// rstd_i = 1 / sqrt(var_i + eps); f16 or bf16 in and out, f32 statistics.
// One block owns block_m rows (samples/row_tile.h). A row that fits one
// chunk stays in registers: its mean first, then the variance around it.
// Wider rows are walked twice in block_n chunks (sum and sum of squares,
// then the store).
//
//   tessel::samples::LayerNormConfig c{.M = 4096, .N = 8192};
//   absl::StatusOr<tessel::Program> p = tessel::samples::LayerNormProgram(c);
//   // parameters: X [M, N], (R [M, N] with .residual), W [N], B [N], Y [M, N]
//
// Registered for tessel-warmup as "layernorm" (params M, N, dtype, eps,
// residual, block_m, block_n, threads, grid, wb_shared).
#ifndef TESSEL_SAMPLES_LAYERNORM_H_
#define TESSEL_SAMPLES_LAYERNORM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct LayerNormConfig {
  int M = 0;
  int N = 0;
  DataType dtype = f16;
  double eps = 1e-5;
  bool residual = false;
  // 0: the default (samples/row_tile.h).
  int block_m = 0;
  int block_n = 0;
  int threads = 0;
  // 0: one block per row tile; else this many blocks, each looping over
  // row tiles (samples/row_params.h, ForEachRowTile).
  int grid = 0;
  // With grid > 0 and one chunk per row: W and B go to shared memory once
  // per block and each row tile reads them from there (not in registers
  // for the whole loop, nor from L2 per row).
  bool wb_shared = false;
};

absl::StatusOr<Program> LayerNormProgram(const LayerNormConfig& config);
absl::StatusOr<Workload> LayerNormWorkload(const LayerNormConfig& config,
                                           uint64_t seed = 1);
// float64 reference; r may be empty (no residual).
HostTensor ReferenceLayerNorm(const HostTensor& x, const HostTensor* r,
                              const HostTensor& w, const HostTensor& b,
                              double eps);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_LAYERNORM_H_
