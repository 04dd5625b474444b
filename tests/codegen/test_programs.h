// Tile programs built directly in IR for the scheduler and codegen tests
// (until the DSL lands): GEMM, element-wise, copies, a real shared-memory
// hazard, a double-buffered loop, atomics, reductions, cumsum, mbarriers.
//
//   ir::Program p = testing::Gemm({.m = 256, .n = 256, .k = 128});
#ifndef TESSEL_TESTS_CODEGEN_TEST_PROGRAMS_H_
#define TESSEL_TESTS_CODEGEN_TEST_PROGRAMS_H_

#include <optional>

#include "src/ir/program.h"

namespace tessel::testing {

struct GemmShape {
  int m = 256, n = 256, k = 256;
  int bm = 128, bn = 128, bk = 32;
  int threads = 128;
  int stages = 3;
  DataType dtype = DataType::kF16;
  bool transpose_b = false;
  bool transpose_a = false;  // A stored [K, M] (M-major)
  int panel = 0;             // use_swizzle panel (0: none)
  bool symbolic = false;     // M, N, K as symbolic sizes
  // B's and C's dtypes when not `dtype` (fp8 A with another fp8 B, an f16
  // C of fp8 inputs).
  std::optional<DataType> b_dtype, out_dtype;
  // GemmWarpPolicy::kFullRow instead of the square one: with too few rows
  // for the warpgroups (bm 64 over 256 threads) wgmma splits N over them.
  bool full_row = false;
};
ir::Program Gemm(const GemmShape& s);

// Ragged gemms that take wgmma on sm_90a (wgmma_test.cc checks their code,
// codegen_gpu_test.cc their numbers): 64x64x64 tiles over 4 warps, B
// N-major or, transposed, K-major; and bf16 128x64x32 tiles over two
// warpgroups.
GemmShape WgmmaGemm(bool transpose_b);
GemmShape WgmmaTwoWarpgroupsGemm();
// Wider wgmma tiles, ragged in M, N and K: the GEMM sample's default tile
// (256x128x64 over two warpgroups: 2 x m64n128k16 per k16 step, N-major B
// in two 128-byte atoms); 128x256x64 over two warpgroups (m64n256k16, four
// atoms); 64x384x64 over one (N in 2 x m64n192k16); 128x128x128 over one
// (K rows of two atoms, A and B).
GemmShape WgmmaSampleTileGemm(DataType dtype, bool transpose_b);
GemmShape WgmmaWideNGemm(bool transpose_b);
GemmShape WgmmaSplitNGemm(bool transpose_b);
// 64 rows over two warpgroups, full-row policy: the warpgroups split N
// (each 64 x 64 of C), ragged in M, N and K.
GemmShape WgmmaWarpgroupsSplitNGemm(bool transpose_b);
GemmShape WgmmaWideKGemm(bool transpose_b);
// M-major A ([K][M] tiles of two atoms, one per warpgroup), 128x128x64
// over two warpgroups.
GemmShape WgmmaMMajorAGemm();

// fp8 (A `a`, B `b`) with f16 C in the layout wgmma takes (A [M, K], B
// [N, K]), ragged in M, N and K: the GEMM sample's fp8 tile on sm_90
// (128x256x128 over two warpgroups, one m64n256k32 per k32 step and
// warpgroup, 4 stages), and 64x64x64 over one warpgroup (m64n64k32, 3
// stages).
GemmShape WgmmaFp8SampleTileGemm(DataType a, DataType b);
GemmShape WgmmaFp8SmallGemm(DataType a, DataType b);

// Y[i] = X[i] * 2 + 1 through a fragment (f32, n elements, 256 per block).
ir::Program Elementwise(int n);

// Y = X (f16 [m, n]) through shared -> fragment (f32) -> shared -> global,
// 64x64 tiles.
ir::Program CopyRoundTrip(int m, int n);

// Y[i, j] = X[63 - i, 63 - j] of each 64x64 f32 tile through shared memory:
// every thread reads what other threads wrote (a real hazard).
ir::Program ReverseTile(int tiles);

// A loop that fills S[(k + 1) % 2] while reading S[k % 2].
ir::Program DoubleBuffered(int steps);

// Y (f32 [64, 64]) += sum over `blocks` blocks of X[b] tiles, with
// atomic_add from shared memory (the linear attention backward pattern).
ir::Program AtomicAccumulate(int blocks, int rows);

// C = A B, then row max m (reduce_max of an mma fragment), C -= m[i].
ir::Program GemmRowMax(int m, int n, int k);

// Y[j] = sum_i X[i, j] (fragment [64, 32], generic reduce), and
// Z = cumsum(X[:, 0]) along the rows (64 values).
ir::Program ReduceAndCumsum();

// A two-stage loop with explicit mbarrier_arrive / mbarrier_wait_parity
// handing a tile from a load stage to a gemm stage (the fused-chunk seed).
ir::Program MbarrierPipeline(int chunks);

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_TEST_PROGRAMS_H_
