// The block tile of the row kernels (rmsnorm, layernorm, softmax): how many
// rows a block owns, how wide a column chunk is, and how many threads. Zero
// asks for the default: whole rows up to 8192 columns in registers (rounded
// up to 256 so that rows split over whole warps with 16-byte accesses; the
// columns past N are masked), about 32 elements per thread, 256 threads.
//
//   RowTile t = PickRowTile(/*N=*/4096, /*block_m=*/0, /*block_n=*/0, 0);
//   // t.block_m == 2, t.block_n == 4096, t.threads == 256, t.chunks == 1
#ifndef TESSEL_SAMPLES_ROW_TILE_H_
#define TESSEL_SAMPLES_ROW_TILE_H_

namespace tessel::samples {

struct RowTile {
  int block_m = 0, block_n = 0, threads = 0;
  int chunks = 0;       // column chunks per row
  bool ragged = false;  // the last chunk runs past N
};

RowTile PickRowTile(int N, int block_m, int block_n, int threads);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_ROW_TILE_H_
