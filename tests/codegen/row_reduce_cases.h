// Row reductions of register tiles (reduce_rows.cc, copy_rows.cc): one
// program per case, R[i] = reduce_j X[i, j] over column chunks (clear or
// not, on top of a filled start value) and Y = X - R[i] of the last chunk
// (the row statistics broadcast in a Parallel loop). The cases cover rows
// within a warp, one warp per row, rows over several warps, tile rows past
// the block's row groups, ragged rows (scalar copies), every reduce kind,
// f16 and f32. And row scans (cumsum) likewise.
//
//   for (const RowCase& c : RowCases()) {
//     absl::StatusOr<tessel::Program> p = RowReduceProgram(c);
//   }
#ifndef TESSEL_TESTS_CODEGEN_ROW_REDUCE_CASES_H_
#define TESSEL_TESTS_CODEGEN_ROW_REDUCE_CASES_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/builder.h"

namespace tessel::testing {

struct RowCase {
  std::string name;
  int M, N, bm, bn, threads;
  DataType dtype = DataType::kF16;
  const char* kind = "sum";  // sum max min abssum absmax
  bool clear = true;
  int group = 0;  // the kRows group layout inference should pick (0: any)
};

inline std::vector<RowCase> RowCases() {
  using D = DataType;
  return {
      {"f16_warp_rows", 64, 512, 4, 512, 128, D::kF16, "sum", true, 32},
      {"f16_rows_over_warps", 16, 4096, 1, 4096, 256, D::kF16, "sum", true,
       256},
      {"f32_sub_warp", 40, 64, 8, 64, 64, D::kF32, "max", true, 16},
      {"f16_tail_rows", 30, 256, 6, 256, 128, D::kF16, "min", true, 32},
      {"f16_chunks_not_clear", 24, 2048, 2, 512, 128, D::kF16, "sum", false,
       64},
      {"f32_absmax_chunks", 17, 1024, 3, 256, 128, D::kF32, "absmax", false,
       64},
      {"f16_abssum_multiwarp_tail", 10, 1024, 3, 1024, 256, D::kF16, "abssum",
       true, 128},
      {"bf16_ragged", 33, 1000, 4, 256, 128, D::kBF16, "max", false, 32},
      {"f32_max_clear_chunks", 8, 2048, 2, 1024, 128, D::kF32, "max", true, 64},
      // One row per block, an odd row (N % vec != 0: element copies; a
      // thread per row).
      {"f16_one_row_odd", 5, 63, 1, 63, 32, D::kF16, "sum", true, 1},
  };
}

inline absl::StatusOr<Program> RowReduceProgram(const RowCase& c) {
  namespace T = tessel;
  const int chunks = (c.N + c.bn - 1) / c.bn;
  T::ProgramBuilder p(absl::StrCat("row_reduce_", c.name));
  auto X = p.tensor("X", {c.M, c.N}, c.dtype);
  auto R = p.tensor("R", {c.M}, DataType::kF32);
  auto Y = p.tensor("Y", {c.M, c.bn}, c.dtype);
  {
    T::Kernel kernel(T::ceildiv(c.M, c.bm), {.threads = c.threads});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({c.bm, c.bn}, DataType::kF32, "x");
    auto y = T::alloc_fragment({c.bm, c.bn}, c.dtype, "y");
    auto r = T::alloc_fragment({c.bm}, DataType::kF32, "r");
    T::fill(r, 0.25f);
    const std::string k = c.kind;
    for (auto j : T::Serial(chunks, {.name = "j"})) {
      T::copy(X(bx * c.bm, j * c.bn), x);
      T::ReduceOptions o{.dim = 1, .clear = c.clear};
      if (k == "sum") T::reduce_sum(x, r, o);
      if (k == "max") T::reduce_max(x, r, o);
      if (k == "min") T::reduce_min(x, r, o);
      if (k == "abssum") T::reduce_abssum(x, r, o);
      if (k == "absmax") T::reduce_absmax(x, r, o);
    }
    for (auto [i, j] : T::Parallel(c.bm, c.bn)) y(i, j) = x(i, j) - r(i);
    T::copy(y, Y(bx * c.bm, 0));
    T::copy(r, R(bx * c.bm));
  }
  return p.finish();
}

// Row scans: Y = cumsum(X) along the rows of [bm, N] tiles (reversed or
// not; in place or into another tile), rows within a warp (warp scans) or
// over several warps (cumsum.cc's staged scan).
struct ScanCase {
  std::string name;
  int M, N, bm, threads;
  DataType dtype = DataType::kF32;
  bool reverse = false, in_place = true;
  int group = 0;  // the kRows group; > 32: the staged scan
};

inline std::vector<ScanCase> ScanCases() {
  using D = DataType;
  return {
      {"f32_warp_rows", 64, 512, 8, 128, D::kF32, false, true, 32},
      {"f32_reverse_sub_warp", 40, 64, 8, 64, D::kF32, true, false, 16},
      {"f16_tail_rows", 30, 256, 6, 128, D::kF16, false, false, 32},
      {"f32_reverse_tail", 21, 128, 5, 128, D::kF32, true, true, 32},
      {"f32_rows_over_warps", 4, 4096, 1, 256, D::kF32, false, true, 256},
  };
}

inline absl::StatusOr<Program> RowCumsumProgram(const ScanCase& c) {
  namespace T = tessel;
  T::ProgramBuilder p(absl::StrCat("row_cumsum_", c.name));
  auto X = p.tensor("X", {c.M, c.N}, c.dtype);
  auto Y = p.tensor("Y", {c.M, c.N}, DataType::kF32);
  {
    T::Kernel kernel(T::ceildiv(c.M, c.bm), {.threads = c.threads});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({c.bm, c.N}, DataType::kF32, "x");
    auto y = T::alloc_fragment({c.bm, c.N}, DataType::kF32, "y");
    T::copy(X(bx * c.bm, 0), x);
    if (c.in_place) {
      T::cumsum(x, {.dim = 1, .reverse = c.reverse});
      T::copy(x, Y(bx * c.bm, 0));
    } else {
      T::cumsum(x, y, {.dim = 1, .reverse = c.reverse});
      T::copy(y, Y(bx * c.bm, 0));
    }
  }
  return p.finish();
}

// A [1, N] tile of one row per block (odd N: element copies), added into
// Y with atomic_add and copied to Z: the unit dim drops out of the index.
inline absl::StatusOr<Program> UnitRowProgram(int M, int N) {
  namespace T = tessel;
  T::ProgramBuilder p("unit_row");
  auto X = p.tensor("X", {M, N}, DataType::kF32);
  auto Y = p.tensor("Y", {M, N}, DataType::kF32);
  auto Z = p.tensor("Z", {M, N}, DataType::kF32);
  {
    T::Kernel kernel(M, {.threads = 32});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({1, N}, DataType::kF32, "x");
    T::copy(X(bx, 0), x);
    T::atomic_add(Y(bx, 0), x);
    T::copy(x, Z(bx, 0));
  }
  return p.finish();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_ROW_REDUCE_CASES_H_
