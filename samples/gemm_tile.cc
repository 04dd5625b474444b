// DefaultGemmTile (gemm.h): the GEMM sample's tile for a device and a
// problem shape. On sm_90 one table decides; the numbers in it come from the
// H200 (bench/results/h200_s7/, tools/dev/session8_gemm_sweep.sh) and are
// the place to adjust.
#include <algorithm>
#include <cstdint>

#include "samples/gemm.h"

namespace tessel::samples {
namespace {

// One row of the sm_90 table: a problem takes the first row whose blocks
// (output tiles x K slices) fill between min_waves and max_waves waves of
// the SMs and whose K slices keep at least min_k_steps block_k steps each.
struct HopperTileRule {
  GemmTile tile;
  double min_waves = 0;
  double max_waves = 1e9;
  int min_k_steps = 0;
  // Only for shapes that 128x256 tiles cover raggedly in both M and N and
  // that TMA takes in every layout (M, N, K multiples of 8).
  bool ragged_mn = false;
};

// 128x256x64 in 4 stages (192 KB of shared memory): each consumer
// warpgroup runs one m64n256k16 wgmma per k16 step (bench/results/h200_s6_*).
constexpr GemmTile kLargeTile{.block_m = 128, .block_n = 256, .num_stages = 4};
// 128x128x64 in 6 stages: twice the blocks; at 512x4096x4096 0.031 ms
// against 0.048 with 128x256 tiles (bench/results/h200_s7/).
constexpr GemmTile kSmallTile{.block_m = 128, .block_n = 128, .num_stages = 6};

// 256x128x64 in 4 stages: at 3000x5000x4000 0.231 ms against 0.266 with
// 128x256 tiles, the same 480 tiles (bench/results/h200_s8/explore/).
constexpr GemmTile kTallTile{.block_m = 256, .block_n = 128, .num_stages = 4};

constexpr GemmTile Split(GemmTile t, int split_k) {
  t.split_k = split_k;
  return t;
}

constexpr HopperTileRule kHopperTileRules[] = {
    {.tile = kTallTile, .min_waves = 1.0, .ragged_mn = true},
    {.tile = kLargeTile, .min_waves = 1.0},
    {.tile = kSmallTile, .min_waves = 0.9},
    // Under 0.9 waves of 128x128 tiles, the most K slices that stay
    // within one wave, each slice keeping 8 or more k steps (1000^3: 64
    // tiles, two slices).
    {.tile = Split(kSmallTile, 4),
     .min_waves = 0.6,
     .max_waves = 1.0,
     .min_k_steps = 8},
    {.tile = Split(kSmallTile, 3),
     .min_waves = 0.6,
     .max_waves = 1.0,
     .min_k_steps = 8},
    {.tile = Split(kSmallTile, 2),
     .min_waves = 0.6,
     .max_waves = 1.0,
     .min_k_steps = 8},
    {.tile = kSmallTile},
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool Fits(const HopperTileRule& r, int block_k, int64_t M, int64_t N, int64_t K,
          int sms) {
  const int64_t tiles = CeilDiv(M, r.tile.block_m) * CeilDiv(N, r.tile.block_n);
  const int64_t k_steps = CeilDiv(K, block_k);
  const int64_t per_slice = CeilDiv(k_steps, r.tile.split_k);
  const double waves = double(tiles * r.tile.split_k) / sms;
  if (r.ragged_mn &&
      (M % kLargeTile.block_m == 0 || N % kLargeTile.block_n == 0 ||
       M % 8 != 0 || N % 8 != 0 || K % 8 != 0)) {
    return false;
  }
  return waves >= r.min_waves && waves <= r.max_waves &&
         per_slice >= r.min_k_steps;
}

}  // namespace

GemmTile DefaultGemmTile(int sm, DataType in_dtype, int64_t M, int64_t N,
                         int64_t K, int sms) {
  // 128-byte rows of K: what wgmma's swizzle atom and the TMA box read.
  const int k_scale = dtype_bytes(in_dtype) == 1 ? 2 : 1;
  GemmTile t;
  if (sm >= 90) {
    t = kLargeTile;  // also when the shape is not given
    if (M > 0 && N > 0) {
      // Without K (0) no row that splits K fits.
      const int64_t k = std::max<int64_t>(K, 0);
      for (const HopperTileRule& r : kHopperTileRules) {
        if (Fits(r, r.tile.block_k * k_scale, M, N, k, std::max(sms, 1))) {
          t = r.tile;
          break;
        }
      }
    }
  }
  t.block_k *= k_scale;
  return t;
}

}  // namespace tessel::samples
