// The block grid of an attention kernel: one block per (tile, head, batch).
//
// Causal tiles differ in length: the backward's first key tile runs every
// query tile, its last one two. Blocks start in launch order, each
// on the next free SM, so a grid whose long blocks come late ends with a
// few SMs busy and the rest idle. Longest first, the grid is (group, tile,
// heads x batch / group): the tiles of `group` heads side by side, the
// longest of each first, then the next group's. A group is about 128 blocks
// (one wave on an H200), so the heads that run at once are as few as in
// the plain grid and their tiles still share the L2 (longest first over all
// heads at once was slower: the forward took 1.312 ms instead of 1.007 at
// B8 S4096 H16 D128, every head's K / V read apart). The causal backward
// at B8 S4096 H16 D128 took 3.535 ms instead of 3.785 (H32 D64: 4.228
// against 4.232; 8d2b18f:bench/results/h200_s14/). The forward gained nothing
// measurable (1.107 against 1.114 ms at D128, 1.402 against 1.393 at D64)
// and keeps its grid: the longest first within each head.
//
//   AttentionGrid grid(tiles, heads, batch, /*longest_first=*/causal);
//   T::Kernel kernel(grid.x(), grid.y(), grid.z(), {.threads = 256});
//   auto [x, y, z] = kernel.block_index();
//   AttentionBlock b = grid.Block(x, y, z);
//   // b.rank: 0 for the longest tile; the kernel maps it to its tile.
#ifndef TESSEL_SAMPLES_ATTENTION_GRID_H_
#define TESSEL_SAMPLES_ATTENTION_GRID_H_

#include "tessel/tessel.h"

namespace tessel::samples {

struct AttentionBlock {
  Expr rank;  // the tile's place by length: 0 the longest (plain: the tile)
  Expr head;
  Expr batch;
};

class AttentionGrid {
 public:
  // The plain grid (tiles, heads, batch) unless longest_first, and then
  // too where no group of heads divides heads x batch within the grid's
  // z limit.
  AttentionGrid(int tiles, int heads, int batch, bool longest_first);

  int x() const { return group_ > 0 ? group_ : tiles_; }
  int y() const { return group_ > 0 ? tiles_ : heads_; }
  int z() const { return group_ > 0 ? heads_ * batch_ / group_ : batch_; }
  // Heads side by side (0: the plain grid).
  int group() const { return group_; }

  AttentionBlock Block(const Expr& x, const Expr& y, const Expr& z) const;

 private:
  int tiles_, heads_, batch_, group_ = 0;
};

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_ATTENTION_GRID_H_
