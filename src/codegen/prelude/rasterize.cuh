// tessel device prelude: block-index rasterization for L2 reuse.
//
// A plain row-major launch order walks a whole row of output tiles before
// the next, so the B panels it reads leave L2 before they are reused. The
// grouped order visits the tiles in panels of `panel` tile rows: inside a
// panel, consecutive blocks go down a column first, so the blocks resident
// at once share both A rows and B columns. Every (m, n) tile is visited
// exactly once, also when grid_m is not a multiple of panel.
//
//   // grid = (grid_n * grid_m, 1, 1)
//   tessel::dev::TileCoord t = tessel::dev::rasterize_grouped(blockIdx.x,
//   grid_m, grid_n, 8); int m0 = t.m * kBM, n0 = t.n * kBN;
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

struct TileCoord {
  int m;
  int n;
};

// Maps a linear block id in [0, grid_m * grid_n) to a tile coordinate.
__device__ __forceinline__ TileCoord rasterize_grouped(int linear, int grid_m,
                                                       int grid_n, int panel) {
  const int tiles_per_panel = panel * grid_n;
  const int panel_id = linear / tiles_per_panel;
  const int first_m = panel_id * panel;
  const int rows = min(grid_m - first_m, panel);
  const int in_panel = linear - panel_id * tiles_per_panel;
  return TileCoord{first_m + in_panel % rows, in_panel / rows};
}

// The same remap for a 2D launch (gridDim.x = grid_n, gridDim.y = grid_m),
// which is what TileLang's use_swizzle applies to T.Kernel(bx, by).
__device__ __forceinline__ TileCoord rasterize_grouped_2d(int panel) {
  const int linear = blockIdx.y * gridDim.x + blockIdx.x;
  return rasterize_grouped(linear, gridDim.y, gridDim.x, panel);
}

}  // namespace dev
}  // namespace tessel
