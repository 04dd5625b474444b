// Row reductions of register tiles without a GPU: every case of
// row_reduce_cases.h lowers to thread-local combines, warp shuffles of the
// width its layout gives a row, shared memory only across warps, and
// 16-byte row copies; NVRTC compiles it for sm_80 and sm_90a. Bad shapes
// stay statuses. The launches are row_reduce_gpu_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tests/codegen/broadcast_cases.h"
#include "tests/codegen/row_reduce_cases.h"

namespace tessel::testing {
namespace {

class RowReduce : public ::testing::TestWithParam<RowCase> {};

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST_P(RowReduce, LowersToShufflesAndCompiles) {
  const RowCase& c = GetParam();
  absl::StatusOr<Program> program = RowReduceProgram(c);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(*program, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string& src = k->source();
    std::string kind = c.kind;
    if (kind == "abssum") kind = "sum";
    if (kind == "absmax") kind = "max";
    EXPECT_EQ(Has(src, absl::StrCat("tl::warp_reduce_", kind, "<",
                                    std::min(c.group, 32), ">(")),
              c.group > 1)
        << src;
    // Shared memory only for rows that span warps.
    EXPECT_EQ(Has(src, "red_scratch"), c.group > 32) << src;
    // No thread walks a row serially (the staged generic reduce).
    EXPECT_FALSE(Has(src, "for (int k = 0;")) << src;
    // 16-byte row copies where the rows are whole vectors.
    const int vec = c.dtype == DataType::kF32 ? 4 : 8;
    const bool vector = c.N % vec == 0;
    EXPECT_EQ(Has(src, absl::StrCat("tl::load_vec<", vec, ">(")), vector)
        << src;
    EXPECT_EQ(Has(src, absl::StrCat("tl::store_vec<", vec, ">(")), vector)
        << src;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RowReduce, ::testing::ValuesIn(RowCases()),
                         [](const auto& info) { return info.param.name; });

class RowScan : public ::testing::TestWithParam<ScanCase> {};

TEST_P(RowScan, LowersToWarpScansAndCompiles) {
  const ScanCase& c = GetParam();
  absl::StatusOr<Program> program = RowCumsumProgram(c);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(*program, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string& src = k->source();
    const bool warp = c.group <= 32;
    EXPECT_EQ(Has(src, absl::StrCat("tl::warp_scan_exclusive_sum<", c.group,
                                    ", ", c.reverse ? "true" : "false", ">(")),
              warp)
        << src;
    EXPECT_EQ(Has(src, "red_scratch"), !warp) << src;
    // A chunk's sum carries into the next one with one shuffle from the
    // group's last lane (the first, reversed), not a warp reduction.
    if (warp) {
      EXPECT_FALSE(Has(src, "tl::warp_reduce_sum<")) << src;
    }
    int chunks = 0;  // one exclusive scan per chunk of the row
    for (size_t at = src.find("tl::warp_scan_exclusive_sum<");
         at != std::string::npos;
         at = src.find("tl::warp_scan_exclusive_sum<", at + 1)) {
      ++chunks;
    }
    EXPECT_EQ(Has(src, absl::StrCat("tl::warp_group_last<", c.group, ", ",
                                    c.reverse ? "true" : "false", ">(")),
              chunks > 1)
        << src;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RowScan, ::testing::ValuesIn(ScanCases()),
                         [](const auto& info) { return info.param.name; });

// Element copies and atomics of a [1, N] tile index the tensor's row by the
// tile's column ((i * 32 + tx + j) % 45 of the blocked layout), not its row.
TEST(UnitDim, OneRowTilesIndexByTheColumn) {
  absl::StatusOr<Program> program = UnitRowProgram(3, 45);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*program, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  EXPECT_TRUE(Has(src, "X[((bx * 45) + ((((i_x * 32) + tx) + j_x) % 45))]"))
      << src;
  EXPECT_TRUE(
      Has(src, "&Y[((bx * 45) + ((((i_x_1 * 32) + tx) + j_x_1) % 45))]"))
      << src;
}

// A mask of the columns past N folds away where the tile's columns cannot
// pass N (the lowering's variable ranges decide col < N), and stays where
// they can.
TEST(ColumnMask, ProvablyTrueComparisonFolds) {
  namespace T = tessel;
  for (int n : {2048, 2000}) {
    T::ProgramBuilder p("column_mask");
    auto X = p.tensor("X", {4, 2048}, DataType::kF16);
    auto Y = p.tensor("Y", {4, 2048}, DataType::kF16);
    {
      T::Kernel kernel(4, {.threads = 256});
      auto [bx] = kernel.block_index();
      auto x = T::alloc_fragment({1, 2048}, DataType::kF32, "x");
      auto y = T::alloc_fragment({1, 2048}, DataType::kF16, "y");
      T::copy(X(bx, 0), x);
      for (auto [i, col] : T::Parallel(1, 2048))
        y(i, col) = T::select(col < n, x(i, col) * 2.0f, 0.0f);
      T::copy(y, Y(bx, 0));
    }
    absl::StatusOr<Program> program = p.finish();
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CompiledKernel> k =
        compile(*program, {.target = Target::sm90a()});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(Has(k->source(), absl::StrCat(" < ", n, ") ?")), n != 2048)
        << k->source();
  }
}

// A row reduce into a fragment of another shape is the user's mistake.
TEST(RowReduceErrors, MismatchedRowsAreAStatus) {
  namespace T = tessel;
  T::ProgramBuilder p("bad_rows");
  auto X = p.tensor("X", {8, 64}, DataType::kF16);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto x = T::alloc_fragment({8, 64}, DataType::kF32, "x");
    auto r = T::alloc_fragment({4}, DataType::kF32, "r");
    T::copy(X(0, 0), x);
    T::reduce_sum(x, r, {.dim = 1});
  }
  absl::StatusOr<Program> program = p.finish();
  EXPECT_FALSE(program.ok());
}

// A bias over N read in the Parallel epilogue of an mma (sm_80) or wgmma
// (sm_90a) accumulator: each thread holds its columns (kMmaCols), read by
// constant indices, no local-memory array.
TEST(Broadcast, GemmBiasReluCompiles) {
  absl::StatusOr<Program> program = GemmBiasReluProgram(256, 256, 128);
  ASSERT_TRUE(program.ok()) << program.status();
  // The CPU target takes it too (the GPU test's reference).
  std::vector<HostTensor> args = {
      *HostTensor::Create(DataType::kF16, {256, 128}),
      *HostTensor::Create(DataType::kF16, {128, 256}),
      *HostTensor::Create(DataType::kF16, {256}),
      *HostTensor::Create(DataType::kF32, {256, 256})};
  args[2].set_flat(5, -2.0);
  args[2].set_flat(6, 3.0);
  ASSERT_TRUE(
      interpret(*program, {&args[0], &args[1], &args[2], &args[3]}).ok());
  EXPECT_EQ(args[3].get_flat(5), 0.0);  // relu(0 - 2)
  EXPECT_EQ(args[3].get_flat(256 + 6), 3.0);
  // local [ni][2], declared flat: the n8 tiles of a warp's columns (wgmma:
  // 4x1 warps, all 128 columns; mma.sync: 2x2, 64).
  for (auto [t, decl] : {std::pair{Target::sm90a(), "float bias_f[32];"},
                         std::pair{Target::sm80(), "float bias_f[16];"}}) {
    absl::StatusOr<CompiledKernel> k = compile(*program, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(Has(k->source(), decl)) << k->source();
    EXPECT_TRUE(Has(k->source(), "bias_f[((i_l1 * 2) + (i_l2 % 2))]"))
        << k->source();
  }
}

// A column max (reduce over dim 0) of a row-reduced tile, read in a later
// Parallel loop over the tile, next to the row sums.
TEST(Broadcast, ColumnStatisticsCompile) {
  absl::StatusOr<Program> program = ColumnMaxProgram(40, 512);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(*program, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(Has(k->source(), "tl::warp_reduce_sum<")) << k->source();
  }
}

}  // namespace
}  // namespace tessel::testing
