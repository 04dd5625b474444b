// The block tile of the row kernels (rmsnorm, layernorm, softmax): how many
// rows a block owns, how wide a column chunk is, and how many threads. Zero
// asks for the default: whole rows up to 8192 columns in registers (rounded
// up to 256 so that rows split over whole warps with 16-byte accesses; the
// columns past N are masked), about 32 elements per thread, 256 threads.
// Rows of 1024 columns or fewer take small blocks instead: 128 threads of
// `narrow_per_thread` elements, so that a cold-L2 call has many blocks in
// flight (H200, 8192x1024 f16 under events: rmsnorm 0.0150 -> 0.0137 ms at
// 8 a thread, layernorm 0.0164 -> 0.0150, softmax 0.0140 -> 0.0137 at 16;
// 8d2b18f:bench/results/h200_s13/rows/).
//
//   RowTile t = PickRowTile(/*N=*/4096, /*block_m=*/0, /*block_n=*/0, 0);
//   // t.block_m == 2, t.block_n == 4096, t.threads == 256, t.chunks == 1
//   t = PickRowTile(/*N=*/1024, 0, 0, 0);
//   // t.block_m == 1, t.block_n == 1024, t.threads == 128
#ifndef TESSEL_SAMPLES_ROW_TILE_H_
#define TESSEL_SAMPLES_ROW_TILE_H_

namespace tessel::samples {

struct RowTile {
  int block_m = 0, block_n = 0, threads = 0;
  int chunks = 0;       // column chunks per row
  bool ragged = false;  // the last chunk runs past N
};

RowTile PickRowTile(int N, int block_m, int block_n, int threads,
                    int narrow_per_thread = 8);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_ROW_TILE_H_
