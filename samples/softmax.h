// Row softmax: Y[i, :] = softmax(X[i, :]), f16 or bf16 in and out, f32
// inside. One block owns block_m rows; a first walk over the columns in
// block_n chunks keeps a running max (reduce_max) and a rescaled running sum
// (reduce_sum), the online softmax; a second walk writes exp(x - max) / sum.
// When a row fits one chunk it is loaded once. Columns past N are masked.
//
//   tessel::samples::SoftmaxConfig c{.M = 4096, .N = 8192};
//   absl::StatusOr<tessel::Program> p = tessel::samples::SoftmaxProgram(c);
//   // parameters: X [M, N], (R [M, N] with .residual: softmax(X + R)),
//   // Y [M, N]
//
// Registered for tessel-warmup as "softmax" (params M, N, dtype, residual,
// block_m, block_n, threads, grid).
#ifndef TESSEL_SAMPLES_SOFTMAX_H_
#define TESSEL_SAMPLES_SOFTMAX_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct SoftmaxConfig {
  int M = 0;
  int N = 0;
  DataType dtype = f16;
  bool residual = false;  // softmax(X + R): R [M, N] after X
  // 0: the default (samples/row_tile.h).
  int block_m = 0;
  int block_n = 0;
  int threads = 0;
  // 0: one block per row tile; else this many blocks, each looping over
  // row tiles (samples/row_params.h, ForEachRowTile).
  int grid = 0;
};

absl::StatusOr<Program> SoftmaxProgram(const SoftmaxConfig& config);
absl::StatusOr<Workload> SoftmaxWorkload(const SoftmaxConfig& config,
                                         uint64_t seed = 1);
HostTensor ReferenceSoftmax(const HostTensor& x);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_SOFTMAX_H_
