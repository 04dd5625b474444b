// DefaultGemmTile (gemm.h): the GEMM sample's tile for a device and a
// problem shape. On sm_90 one table decides; the numbers in it come from the
// H200 (8d2b18f:bench/results/h200_s7/ and h200_s8/) and are the place to
// adjust (8d2b18f:tools/dev/session8_gemm_sweep.sh swept the tiles of the weak
// shapes). Archs with less shared memory than GemmTile{} needs take a smaller
// tile.
#include <algorithm>
#include <cstdint>

#include "samples/gemm.h"
#include "samples/sample_util.h"

namespace tessel::samples {
namespace {

// One row of the sm_90 table: a problem takes the first row whose output
// tiles fill at least min_waves waves of the SMs.
struct HopperTileRule {
  GemmTile tile;
  double min_waves = 0;
  // Only for shapes that 128x256 tiles cover raggedly in both M and N and
  // that TMA takes in every layout (M, N, K multiples of 8).
  bool ragged_mn = false;
};

// 128x256x64 in 4 stages (192 KB of shared memory): each consumer
// warpgroup runs one m64n256k16 wgmma per k16 step
// (8d2b18f:bench/results/h200_s6_*).
constexpr GemmTile kLargeTile{.block_m = 128, .block_n = 256, .num_stages = 4};
// 128x128x64 in 6 stages: twice the blocks; at 512x4096x4096 0.031 ms
// against 0.048 with 128x256 tiles (8d2b18f:bench/results/h200_s7/).
constexpr GemmTile kSmallTile{.block_m = 128, .block_n = 128, .num_stages = 6};

// 256x128x64 in 4 stages: at 3000x5000x4000 0.231 ms against 0.266 with
// 128x256 tiles, the same 480 tiles (8d2b18f:bench/results/h200_s8/explore/).
constexpr GemmTile kTallTile{.block_m = 256, .block_n = 128, .num_stages = 4};

constexpr HopperTileRule kHopperTileRules[] = {
    {.tile = kTallTile, .min_waves = 1.0, .ragged_mn = true},
    {.tile = kLargeTile, .min_waves = 1.0},
    {.tile = kSmallTile, .min_waves = 0.9},
    // Fewer tiles still: 128x128 all the same. Splitting K lost on the
    // H200: 1000^3 took 0.021 ms in two slices against 0.015 unsplit
    // (8d2b18f:bench/results/h200_s8/): the reduce kernel and the f32 workspace
    // cost more than the idle SMs gain. --split-k still asks for it.
    {.tile = kSmallTile},
};

// Where GemmTile{} (256x128x64 in 3 stages, 144 KB) does not fit (sm_86,
// sm_89, sm_120: 99 KB a block): 128x128x32 in 4 stages, 64 KB.
constexpr GemmTile kSmallSharedTile{
    .block_m = 128, .block_n = 128, .block_k = 32, .num_stages = 4};

// The bytes of a tile's pipeline stages of A and B (16-bit elements; fp8
// doubles block_k, the same bytes).
int64_t StageBytes(const GemmTile& t) {
  return int64_t{t.num_stages} * (t.block_m + t.block_n) * t.block_k * 2;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool Fits(const HopperTileRule& r, int64_t M, int64_t N, int64_t K, int sms) {
  if (r.ragged_mn &&
      (M % kLargeTile.block_m == 0 || N % kLargeTile.block_n == 0 ||
       M % 8 != 0 || N % 8 != 0 || K % 8 != 0)) {
    return false;
  }
  const int64_t tiles = CeilDiv(M, r.tile.block_m) * CeilDiv(N, r.tile.block_n);
  return double(tiles) / sms >= r.min_waves;
}

}  // namespace

GemmTile PingpongGemmTile(int sm, DataType in_dtype) {
  if (!HopperSharedMemory(sm)) return DefaultGemmTile(sm, in_dtype);
  GemmTile t{.block_m = 128,
             .block_n = 128,
             .num_stages = 6,
             .threads = 128,
             .pingpong = true};
  if (dtype_bytes(in_dtype) == 1) t.block_k *= 2;
  return t;
}

GemmTile DefaultGemmTile(int sm, DataType in_dtype, int64_t M, int64_t N,
                         int64_t K, int sms) {
  // 128-byte rows of K: what wgmma's swizzle atom and the TMA box read.
  const int k_scale = dtype_bytes(in_dtype) == 1 ? 2 : 1;
  GemmTile t;
  if (HopperSharedMemory(sm)) {
    t = kLargeTile;  // also when the shape is not given
    // Where rows are not 16 bytes apart the TMA refuses the operand and the
    // kernel loses the warp-specialized path: 4095x4097x4096 NN took 1.31 ms
    // on the H200 against 0.27 for NT (bench/results/h200/gemm.json).
    t.pad_rows = true;
    if (M > 0 && N > 0) {
      for (const HopperTileRule& r : kHopperTileRules) {
        if (Fits(r, M, N, K, std::max(sms, 1))) {
          t = r.tile;
          t.pad_rows = true;
          break;
        }
      }
    }
  } else if (sm > 0 && StageBytes(t) > MaxSharedBytes(sm)) {
    t = kSmallSharedTile;
  }
  t.block_k *= k_scale;
  return t;
}

}  // namespace tessel::samples
