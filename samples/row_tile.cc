#include "samples/row_tile.h"

#include <algorithm>

namespace tessel::samples {

RowTile PickRowTile(int N, int block_m, int block_n, int threads,
                    int narrow_per_thread) {
  constexpr int kMaxRow = 8192;  // f32 registers: 32 per thread at 256
  constexpr int kNarrowRow = 1024, kNarrowThreads = 128;
  RowTile t;
  if (block_n > 0) {
    t.block_n = std::min(block_n, N);
  } else {
    t.block_n = std::min(kMaxRow, (N + 255) / 256 * 256);
  }
  const bool narrow = threads <= 0 && block_m <= 0 && t.block_n <= kNarrowRow;
  t.threads = threads > 0 ? threads : narrow ? kNarrowThreads : 256;
  if (block_m > 0) {
    t.block_m = block_m;
  } else if (narrow) {
    t.block_m =
        std::clamp(kNarrowThreads * narrow_per_thread / t.block_n, 1, 64);
  } else {
    t.block_m = std::clamp(kMaxRow / t.block_n, 1, 64);
  }
  // A [1, block_n] tile wider than the tensor's rows would read as a tile
  // of the last dim alone (the copy's start-point form): two rows.
  if (block_m <= 0 && t.block_n > N) t.block_m = std::max(t.block_m, 2);
  t.chunks = (N + t.block_n - 1) / t.block_n;
  t.ragged = N % t.block_n != 0;
  return t;
}

}  // namespace tessel::samples
