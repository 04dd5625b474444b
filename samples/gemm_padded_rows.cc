#include "samples/gemm_padded_rows.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

// The copy kernel's block: 16 x 256 elements over 256 threads; it only
// streams memory (the unaligned source rows are read element-wise).
constexpr int kPadRows = 16;
constexpr int kPadCols = 256;
constexpr int kPadThreads = 256;

absl::StatusOr<Program> MakePadRows(const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  SAMPLES_ASSIGN_OR_RETURN(int64_t rows, params.IntInRange("rows", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(int64_t cols, params.IntInRange("cols", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(int64_t padded,
                           params.IntInRange("padded_cols", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(DataType dtype, params.Dtype("dtype", f16));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return PadRowsProgram(rows, cols, padded, dtype);
}

}  // namespace

int64_t GemmStoredCols(const GemmConfig& c, char operand) {
  if (operand == 'A') return TransposedA(c.layout) ? c.M : c.K;
  return TransposedB(c.layout) ? c.K : c.N;
}

int64_t GemmPaddedCols(const GemmConfig& c, char operand) {
  const int64_t cols = GemmStoredCols(c, operand);
  if (!c.tile.pad_rows) return cols;
  const int64_t align = 16 / dtype_bytes(c.in_dtype);
  return (cols + align - 1) / align * align;
}

absl::StatusOr<Program> PadRowsProgram(int64_t rows, int64_t cols,
                                       int64_t padded_cols, DataType dtype) {
  if (rows <= 0 || cols <= 0 || padded_cols < cols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemm_pad_rows: needs positive sizes and padded_cols >= cols, got "
        "rows=",
        rows, " cols=", cols, " padded_cols=", padded_cols));
  }
  T::ProgramBuilder p("gemm_pad_rows");
  auto X = p.tensor("src", {rows, cols}, dtype);
  auto Y = p.tensor("padded", {rows, padded_cols}, dtype);
  {
    T::Kernel kernel(T::ceildiv(padded_cols, kPadCols),
                     T::ceildiv(rows, kPadRows), {.threads = kPadThreads});
    auto [bx, by] = kernel.block_index();
    auto tile = T::alloc_fragment({kPadRows, kPadCols}, dtype, "tile");
    // Past `cols` the copy reads zeros (the boundary rule), which the store
    // writes into the padding; past padded_cols it stores nothing.
    T::copy(X(by * kPadRows, bx * kPadCols), tile);
    T::copy(tile, Y(by * kPadRows, bx * kPadCols));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(gemm_pad_rows, MakePadRows);

}  // namespace tessel::samples
