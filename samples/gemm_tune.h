// Tuning the sample GEMM's tile on the GPU (what `gemm --tune` runs).
//
//   tessel::samples::GemmConfig c{.M = 4096, .N = 4096, .K = 4096};
//   tessel::TuneSpace space =
//       tessel::samples::GemmTuneSpace(c, tessel::Target::detect());
//   absl::StatusOr<tessel::TuneResult> r = tessel::samples::TuneGemm(
//       c, space, {.progress = &std::cout});
//   if (r.ok()) c.tile = *tessel::samples::GemmTileFromConfig(r->best, c.tile);
//
// Parameters: block_m, block_n, block_k, num_stages, threads, panel,
// cluster, and the 0 / 1 switches pingpong and persistent (the fields of
// GemmTile). Each candidate runs on one set of random inputs and is
// checked against the float64 reference (computed once, at the first check)
// before it is timed.
#ifndef TESSEL_SAMPLES_GEMM_TUNE_H_
#define TESSEL_SAMPLES_GEMM_TUNE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/gemm.h"
#include "tessel/autotune.h"

namespace tessel::samples {

// The tile as a config of the parameters above.
TuneConfig GemmTileConfig(const GemmTile& tile);

// The tile a config describes; parameters it lacks keep `base`'s.
// InvalidArgument for a value that is not an integer in int range or an
// unknown parameter.
absl::StatusOr<GemmTile> GemmTileFromConfig(const TuneConfig& config,
                                            GemmTile base = {});

// A small space around the default tile: block_m x block_n of 64..256 (no
// tile thinner than 1:2), block_k 32 or 64, 2 to 4 stages, 128 or 256
// threads, filtered to tiles that fit the target's shared memory and give
// each thread 32 to 128 accumulators. On sm_90a also the schedules: ping-pong
// (128 threads, 4 or 6 stages), cluster pairs, persistent or not (pairs and
// ping-pong only persistent, never both). Axes named in `pinned` take its value
// only (the command line's --block-m etc.).
TuneSpace GemmTuneSpace(const GemmConfig& config, const Target& target,
                        const TuneConfig& pinned = {});

// The schedule axes (pingpong, cluster, persistent) are pass configs, not
// program changes: this sets them on a candidate's compile options, as
// GemmWorkload does on its steps from the tile.
void ApplyGemmSchedule(const TuneConfig& config, CompileOptions& options);

// Tunes config's tile (config.tile fills what the space leaves out) on
// device 0, as tessel::autotune does; Unavailable without a GPU.
absl::StatusOr<TuneResult> TuneGemm(const GemmConfig& config,
                                    const TuneSpace& space,
                                    const TuneOptions& options = {},
                                    uint64_t seed = 1);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_GEMM_TUNE_H_
