// What the row kernels' samples (rmsnorm, layernorm, softmax) share around
// their programs: reading the registry params every one of them takes,
// checking a config, and the sizes their sample binaries run.
//
//   SAMPLES_RETURN_IF_ERROR(ReadRowParams(params, config));   // M, N, ...
//   SAMPLES_RETURN_IF_ERROR(CheckRowConfig("rmsnorm", c.M, c.N, c.dtype,
//                                          c.block_m, c.block_n, c.threads));
#ifndef TESSEL_SAMPLES_ROW_PARAMS_H_
#define TESSEL_SAMPLES_ROW_PARAMS_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// M, N, dtype (default f16), residual, block_m, block_n, threads, grid of
// any row config.
template <typename Config>
absl::Status ReadRowParams(const KernelParams& params, Config& c) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.dtype, params.Dtype("dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.residual, params.Bool("residual", c.residual));
  SAMPLES_ASSIGN_OR_RETURN(c.block_m,
                           params.IntInRange("block_m", 1, 256, c.block_m));
  SAMPLES_ASSIGN_OR_RETURN(c.block_n,
                           params.IntInRange("block_n", 1, 8192, c.block_n));
  SAMPLES_ASSIGN_OR_RETURN(c.threads,
                           params.IntInRange("threads", 32, 1024, c.threads));
  SAMPLES_ASSIGN_OR_RETURN(c.grid,
                           params.IntInRange("grid", 0, 1 << 20, c.grid));
  return absl::OkStatus();
}

// InvalidArgument naming the kernel: sizes not positive, a dtype other
// than f16 / bf16 / f32, a negative tile field (0 is the default).
absl::Status CheckRowConfig(const std::string& kernel, int M, int N,
                            DataType dtype, int block_m, int block_n,
                            int threads);

// The (M, N) a row sample's --size names: small (a row in one chunk, and
// ragged rows), bench (4096x8192, 16384x4096, 8192x1024) or MxN.
absl::StatusOr<std::vector<std::pair<int, int>>> RowSizes(
    const std::string& size);

// --eps=X into eps (unchanged without the flag).
absl::Status ReadEpsFlag(const Flags& flags, double& eps);

// The configs a row sample binary runs: base, with --dtype, --residual,
// --block-m, --block-n, --threads, --grid, at each of RowSizes(--size); in the
// small set the ragged rows run over 256-column chunks in bf16 with a residual
// (unless the flags say).
template <typename Config>
absl::StatusOr<std::vector<Config>> RowConfigs(const SampleArgs& args,
                                               const Flags& flags,
                                               Config base) {
  SAMPLES_ASSIGN_OR_RETURN(base.dtype, flags.Dtype("dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(base.residual, flags.Bool("residual", false));
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"threads", &base.threads},
                                      {"grid", &base.grid}}));
  SAMPLES_ASSIGN_OR_RETURN(auto sizes, RowSizes(args.size));
  std::vector<Config> configs;
  for (auto [m, n] : sizes) {
    configs.push_back(base);
    configs.back().M = m;
    configs.back().N = n;
  }
  if (args.size == "small") {
    if (!flags.Has("block-n")) configs[1].block_n = 256;
    if (!flags.Has("dtype")) configs[1].dtype = bf16;
    if (!flags.Has("residual")) configs[1].residual = true;
  }
  return configs;
}

// Records x = X[rows, cols] (+ R[rows, cols] when R is given) for the
// [bm, bn] f32 tile x at (row0, col0); columns past N read as zeros.
void LoadRows(const Buffer& X, const std::optional<Buffer>& R, const Expr& row0,
              const Expr& col0, const Buffer& x, int bm, int bn);

// The blocks of a row kernel over M rows in tiles of bm: one block per tile
// (grid == 0), or min(grid, tiles) blocks (a persistent grid).
Expr RowBlocks(int M, int bm, int grid);

// Records body(row0) for each row tile block bx owns: its one tile
// (grid == 0), or with a persistent grid the tiles bx, bx + blocks, ...,
// so that what the block loads before (a weight row) serves all of them;
// a block's last tile may lie past M (its copies then read zeros and store
// nothing).
void ForEachRowTile(const Expr& bx, int M, int bm, int grid,
                    const std::function<void(const Expr& row0)>& body);

// x + r as a float64 tensor (the references of the residual variants).
HostTensor AddResidual(const HostTensor& x, const HostTensor& r);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_ROW_PARAMS_H_
