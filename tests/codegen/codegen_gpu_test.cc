// Every test program on the GPU against a float64 reference computed on the
// host, sizes both multiples and not multiples of the tiles; and the race
// test: without barrier insertion the hazard program must fail.
#include <gtest/gtest.h>

#include "jit/device_buffer.h"
#include "tessel/compile.h"
#include "tests/codegen/gpu_util.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

using testing::DeviceTensor;
using testing::MaxRelError;
using testing::Random;
using testing::Rounded;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveGpu()) GTEST_SKIP() << "no CUDA device";
  }
  static CompiledKernel Compile(const ir::Program& p, PassConfig c = {}) {
    absl::StatusOr<CompiledKernel> k =
        compile(p, {.target = Target::detect(), .pass_config = c});
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? *k : CompiledKernel();
  }
  static void Run(const CompiledKernel& k, std::vector<TensorView> t) {
    ASSERT_TRUE(k.valid());
    absl::Status s = k.launch(t);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  }
};

void CheckGemm(const testing::GemmShape& s) {
  int M = s.m, N = s.n, K = s.k;
  const DataType bt = s.b_dtype.value_or(s.dtype);
  const DataType ct = s.out_dtype.value_or(s.dtype);
  std::vector<float> a = Rounded(Random(size_t(M) * K, 1), s.dtype);
  std::vector<float> b = Rounded(Random(size_t(K) * N, 2), bt);
  auto A = s.transpose_a ? DeviceTensor::From(a, s.dtype, {K, M})
                         : DeviceTensor::From(a, s.dtype, {M, K});
  auto B = s.transpose_b ? DeviceTensor::From(b, bt, {N, K})
                         : DeviceTensor::From(b, bt, {K, N});
  auto C =
      DeviceTensor::From(std::vector<float>(size_t(M) * N, 7.0f), ct, {M, N});
  absl::StatusOr<CompiledKernel> k =
      compile(testing::Gemm(s), {.target = Target::detect()});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE(k->launch({A.view, B.view, C.view}).ok());
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  std::vector<double> ref(size_t(M) * N, 0);
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk) {
      double av = s.transpose_a ? a[size_t(kk) * M + i] : a[size_t(i) * K + kk];
      for (int j = 0; j < N; ++j) {
        double bv =
            s.transpose_b ? b[size_t(j) * K + kk] : b[size_t(kk) * N + j];
        ref[size_t(i) * N + j] += av * bv;
      }
    }
  double err = MaxRelError(C.ToHost(), ref);
  EXPECT_LT(err, 5e-3) << M << "x" << N << "x" << K;
}

TEST_F(Gpu, GemmMultipleOfTiles) { CheckGemm({.m = 256, .n = 256, .k = 256}); }
TEST_F(Gpu, GemmNotMultipleOfTiles) {
  CheckGemm({.m = 333, .n = 264, .k = 200});
}
TEST_F(Gpu, GemmBigTileRasterized) {
  CheckGemm({.m = 520,
             .n = 392,
             .k = 264,
             .bm = 256,
             .bn = 128,
             .bk = 64,
             .threads = 256,
             .stages = 3,
             .panel = 8});
}
TEST_F(Gpu, GemmSymbolicSizes) {
  CheckGemm({.m = 200, .n = 136, .k = 72, .symbolic = true});
}
TEST_F(Gpu, GemmBf16TransposedB) {
  CheckGemm({.m = 192,
             .n = 136,
             .k = 96,
             .dtype = DataType::kBF16,
             .transpose_b = true});
}
TEST_F(Gpu, GemmTwoStages) {
  CheckGemm({.m = 128, .n = 128, .k = 512, .stages = 2});
}
// Fewer k-tiles than stages: the fragment pipeline's prologue and its loads
// past the last tile must not disturb the result.
TEST_F(Gpu, GemmOneKTile) { CheckGemm({.m = 128, .n = 128, .k = 32}); }
// One k16 step per tile: the fragments double-buffer inside the tile only.
TEST_F(Gpu, GemmSingleK16Step) {
  CheckGemm({.m = 128, .n = 128, .k = 80, .bk = 16});
}

// wgmma.mma_async on sm_90a (64-row warpgroup tiles, 128-byte B rows):
// N-major and K-major B, two warpgroups, bf16, ragged edges.
TEST_F(Gpu, GemmWgmmaNMajorB) { CheckGemm(testing::WgmmaGemm(false)); }
TEST_F(Gpu, GemmWgmmaKMajorB) { CheckGemm(testing::WgmmaGemm(true)); }
TEST_F(Gpu, GemmWgmmaTwoWarpgroupsBf16) {
  CheckGemm(testing::WgmmaTwoWarpgroupsGemm());
}
// Wider wgmma tiles (ragged M, N, K): the GEMM sample's default tile (two
// m64 blocks per warpgroup, B in two atoms), m64n256 (four atoms), N split
// over two m64n192, K rows of two atoms.
TEST_F(Gpu, GemmWgmmaSampleTileF16NN) {
  CheckGemm(testing::WgmmaSampleTileGemm(DataType::kF16, false));
}
TEST_F(Gpu, GemmWgmmaSampleTileBf16NT) {
  CheckGemm(testing::WgmmaSampleTileGemm(DataType::kBF16, true));
}
TEST_F(Gpu, GemmWgmmaSampleTileBf16NN) {
  CheckGemm(testing::WgmmaSampleTileGemm(DataType::kBF16, false));
}
TEST_F(Gpu, GemmWgmmaWideN) {
  CheckGemm(testing::WgmmaWideNGemm(false));
  CheckGemm(testing::WgmmaWideNGemm(true));
}
// 64 rows over two warpgroups: each its 64 columns (WgmmaCols).
TEST_F(Gpu, GemmWgmmaWarpgroupsSplitN) {
  CheckGemm(testing::WgmmaWarpgroupsSplitNGemm(false));
  CheckGemm(testing::WgmmaWarpgroupsSplitNGemm(true));
}
TEST_F(Gpu, GemmWgmmaSplitN) {
  CheckGemm(testing::WgmmaSplitNGemm(false));
  CheckGemm(testing::WgmmaSplitNGemm(true));
}
TEST_F(Gpu, GemmWgmmaMMajorA) { CheckGemm(testing::WgmmaMMajorAGemm()); }
TEST_F(Gpu, GemmWgmmaWideK) {
  CheckGemm(testing::WgmmaWideKGemm(false));
  CheckGemm(testing::WgmmaWideKGemm(true));
}

// fp8 wgmma m64nNk32 (A [M, K], B [N, K], f16 C): the sample's fp8 tile
// through the warp-specialized TMA pipeline, e4m3, e5m2 and mixed, at
// ragged sizes and tile multiples; one warpgroup; the cp.async pipeline
// (rows of K = 200 bytes the TMA cannot map); K rows of two atoms.
TEST_F(Gpu, GemmWgmmaFp8SampleTile) {
  const DataType e4m3 = DataType::kF8E4M3, e5m2 = DataType::kF8E5M2;
  CheckGemm(testing::WgmmaFp8SampleTileGemm(e4m3, e4m3));
  CheckGemm(testing::WgmmaFp8SampleTileGemm(e5m2, e5m2));
  CheckGemm(testing::WgmmaFp8SampleTileGemm(e4m3, e5m2));
  testing::GemmShape tiles = testing::WgmmaFp8SampleTileGemm(e4m3, e4m3);
  tiles.m = 512, tiles.n = 768, tiles.k = 1024;
  CheckGemm(tiles);
}
TEST_F(Gpu, GemmWgmmaFp8OneWarpgroup) {
  const DataType e4m3 = DataType::kF8E4M3, e5m2 = DataType::kF8E5M2;
  CheckGemm(testing::WgmmaFp8SmallGemm(e4m3, e4m3));
  CheckGemm(testing::WgmmaFp8SmallGemm(e5m2, e4m3));
}
TEST_F(Gpu, GemmWgmmaFp8CpAsyncRows) {
  testing::GemmShape s =
      testing::WgmmaFp8SmallGemm(DataType::kF8E4M3, DataType::kF8E4M3);
  s.k = 200;
  CheckGemm(s);
}
TEST_F(Gpu, GemmWgmmaFp8WideK) {
  testing::GemmShape s =
      testing::WgmmaFp8SmallGemm(DataType::kF8E5M2, DataType::kF8E5M2);
  s.bk = 256;
  s.k = 528;
  CheckGemm(s);
}

TEST_F(Gpu, GemmF32FmaPath) {
  testing::GemmShape s{.m = 96,
                       .n = 80,
                       .k = 48,
                       .bm = 32,
                       .bn = 32,
                       .bk = 16,
                       .threads = 128,
                       .stages = 2,
                       .dtype = DataType::kF32};
  CheckGemm(s);
}

TEST_F(Gpu, Elementwise) {
  int n = 1000;
  std::vector<float> x = Random(n, 3);
  auto X = DeviceTensor::From(x, DataType::kF32, {n});
  auto Y = DeviceTensor::From(std::vector<float>(n, 0), DataType::kF32, {n});
  Run(Compile(testing::Elementwise(n)), {X.view, Y.view});
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = x[i] * 2.0 + 1.0;
  EXPECT_LT(MaxRelError(Y.ToHost(), ref), 1e-6);
}

TEST_F(Gpu, CopyRoundTrip) {
  int m = 100, n = 136;
  std::vector<float> x = Rounded(Random(m * n, 4), DataType::kF16);
  auto X = DeviceTensor::From(x, DataType::kF16, {m, n});
  auto Y =
      DeviceTensor::From(std::vector<float>(m * n, 0), DataType::kF16, {m, n});
  Run(Compile(testing::CopyRoundTrip(m, n)), {X.view, Y.view});
  EXPECT_EQ(Y.ToHost(), x);
}

std::vector<double> ReverseRef(const std::vector<float>& x, int tiles) {
  std::vector<double> ref(x.size());
  for (int t = 0; t < tiles; ++t)
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j)
        ref[(t * 64 + i) * 64 + j] = x[(t * 64 + 63 - i) * 64 + 63 - j];
  return ref;
}

TEST_F(Gpu, ReverseTileHasItsBarrier) {
  int tiles = 2048;
  std::vector<float> x = Random(tiles * 64 * 64, 5);
  auto X = DeviceTensor::From(x, DataType::kF32, {tiles * 64, 64});
  auto Y = DeviceTensor::From(std::vector<float>(x.size(), 0), DataType::kF32,
                              {tiles * 64, 64});
  Run(Compile(testing::ReverseTile(tiles)), {X.view, Y.view});
  EXPECT_EQ(MaxRelError(Y.ToHost(), ReverseRef(x, tiles)), 0.0);
}

// Proof that the check can fail: the same program without barrier
// insertion reads shared memory before other threads wrote it.
TEST_F(Gpu, ReverseTileRacesWithoutThreadSync) {
  int tiles = 2048;
  std::vector<float> x = Random(tiles * 64 * 64, 5);
  auto X = DeviceTensor::From(x, DataType::kF32, {tiles * 64, 64});
  std::vector<double> ref = ReverseRef(x, tiles);
  CompiledKernel k =
      Compile(testing::ReverseTile(tiles), {.disable_thread_sync = true});
  int wrong_runs = 0;
  for (int run = 0; run < 5; ++run) {
    auto Y = DeviceTensor::From(std::vector<float>(x.size(), 0), DataType::kF32,
                                {tiles * 64, 64});
    Run(k, {X.view, Y.view});
    if (MaxRelError(Y.ToHost(), ref) > 0) ++wrong_runs;
  }
  EXPECT_GT(wrong_runs, 0) << "the unsynchronized kernel never raced";
}

TEST_F(Gpu, DoubleBuffered) {
  int steps = 16;
  std::vector<float> x = Random((steps + 1) * 128, 6);
  auto X = DeviceTensor::From(x, DataType::kF32, {steps + 1, 128});
  auto Y = DeviceTensor::From(std::vector<float>(steps * 128, 0),
                              DataType::kF32, {steps, 128});
  Run(Compile(testing::DoubleBuffered(steps)), {X.view, Y.view});
  std::vector<double> ref(steps * 128);
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < 128; ++i) ref[k * 128 + i] = x[k * 128 + 127 - i];
  EXPECT_EQ(MaxRelError(Y.ToHost(), ref), 0.0);
}

TEST_F(Gpu, AtomicAccumulate) {
  int blocks = 6, rows = 100;
  std::vector<float> x = Random(blocks * rows * 64, 7);
  std::vector<float> y0 = Random(rows * 64, 8);
  auto X = DeviceTensor::From(x, DataType::kF32, {blocks, rows, 64});
  auto Y = DeviceTensor::From(y0, DataType::kF32, {rows, 64});
  Run(Compile(testing::AtomicAccumulate(blocks, rows)), {X.view, Y.view});
  std::vector<double> ref(y0.begin(), y0.end());
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < rows * 64; ++i) ref[i] += x[b * rows * 64 + i];
  EXPECT_LT(MaxRelError(Y.ToHost(), ref), 1e-5);
}

TEST_F(Gpu, GemmRowMax) {
  int m = 128, n = 192, k = 64;
  std::vector<float> a = Rounded(Random(m * k, 9), DataType::kF16);
  std::vector<float> b = Rounded(Random(k * n, 10), DataType::kF16);
  auto A = DeviceTensor::From(a, DataType::kF16, {m, k});
  auto B = DeviceTensor::From(b, DataType::kF16, {k, n});
  auto C =
      DeviceTensor::From(std::vector<float>(m * n, 0), DataType::kF32, {m, n});
  Run(Compile(testing::GemmRowMax(m, n, k)), {A.view, B.view, C.view});
  std::vector<double> ref(m * n, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk)
        ref[i * n + j] += double(a[i * k + kk]) * b[kk * n + j];
  for (int i = 0; i < m; ++i)
    for (int j0 = 0; j0 < n; j0 += 64) {
      double mx = -1e30;
      for (int j = j0; j < j0 + 64; ++j) mx = std::max(mx, ref[i * n + j]);
      for (int j = j0; j < j0 + 64; ++j) ref[i * n + j] -= mx;
    }
  EXPECT_LT(MaxRelError(C.ToHost(), ref), 1e-4);
}

TEST_F(Gpu, ReduceAndCumsum) {
  std::vector<float> x = Random(64 * 32, 11);
  auto X = DeviceTensor::From(x, DataType::kF32, {64, 32});
  auto Y = DeviceTensor::From(std::vector<float>(32, 0), DataType::kF32, {32});
  auto Z = DeviceTensor::From(std::vector<float>(64, 0), DataType::kF32, {64});
  Run(Compile(testing::ReduceAndCumsum()), {X.view, Y.view, Z.view});
  std::vector<double> col(32, 0), cum(64, 0);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 32; ++j) col[j] += x[i * 32 + j];
  double run = 0;
  for (int i = 0; i < 64; ++i) cum[i] = run += x[i * 32];
  EXPECT_LT(MaxRelError(Y.ToHost(), col), 1e-5);
  EXPECT_LT(MaxRelError(Z.ToHost(), cum), 1e-5);
}

TEST_F(Gpu, MbarrierPipeline) {
  int chunks = 4;
  std::vector<float> a = Rounded(Random(chunks * 64 * 64, 12), DataType::kF16);
  std::vector<float> b = Rounded(Random(64 * 64, 13), DataType::kF16);
  auto A = DeviceTensor::From(a, DataType::kF16, {chunks * 64, 64});
  auto B = DeviceTensor::From(b, DataType::kF16, {64, 64});
  auto C = DeviceTensor::From(std::vector<float>(64 * 64, 0), DataType::kF32,
                              {64, 64});
  Run(Compile(testing::MbarrierPipeline(chunks)), {A.view, B.view, C.view});
  std::vector<double> ref(64 * 64, 0);
  for (int c = 0; c < chunks; ++c)
    for (int i = 0; i < 64; ++i)
      for (int kk = 0; kk < 64; ++kk)
        for (int j = 0; j < 64; ++j)
          ref[i * 64 + j] += double(a[(c * 64 + i) * 64 + kk]) * b[kk * 64 + j];
  EXPECT_LT(MaxRelError(C.ToHost(), ref), 1e-4);
}

TEST_F(Gpu, LaunchRejectsWrongDtype) {
  CompiledKernel k = Compile(testing::Elementwise(1000));
  auto X =
      DeviceTensor::From(std::vector<float>(1000, 0), DataType::kF32, {1000});
  TensorView bad = X.view;
  bad.dtype = DataType::kF16;
  absl::Status s = k.launch({bad, X.view});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessel
