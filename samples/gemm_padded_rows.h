// Padded operand rows for the GEMM sample (gemm.h). The TMA takes a global
// tensor only when its rows are a multiple of 16 bytes apart; an operand
// whose last dimension is not (B of 4095x4097x4096 NN: 4097 f16 columns)
// kept the whole kernel off the warp-specialized path, and its rows were
// read one element at a time (1.31 ms on the H200 where NT, whose operands
// are aligned, takes 0.27). With GemmTile::pad_rows such an operand is first
// copied into a workspace whose rows are padded to 16 bytes with zeros, and
// the gemm reads that: the zeros past K add nothing, the columns past N land
// in C's columns past N, which are not stored.
//
//   GemmConfig c{.M = 4095, .N = 4097, .K = 4096,
//                .tile = {.pad_rows = true}};
//   GemmPaddedCols(c, 'B');             // 4104: B is padded
//   Program pad = *PadRowsProgram(4096, 4097, 4104, f16);  // B, B_padded
//
// GemmWorkload runs the copies, then the gemm. Registered for tessel-warmup
// as "gemm_pad_rows" with params rows, cols, padded_cols, optional dtype.
#ifndef TESSEL_SAMPLES_GEMM_PADDED_ROWS_H_
#define TESSEL_SAMPLES_GEMM_PADDED_ROWS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "samples/gemm.h"

namespace tessel::samples {

// The last dimension of operand 'A' or 'B' as stored (K or M for A, N or K
// for B, by the layout).
int64_t GemmStoredCols(const GemmConfig& config, char operand);

// The operand's last dimension as the gemm kernel reads it: rounded up to
// 16 bytes when tile.pad_rows and the stored rows are not 16-byte aligned,
// else the stored one.
int64_t GemmPaddedCols(const GemmConfig& config, char operand);

inline bool GemmPadsOperand(const GemmConfig& config, char operand) {
  return GemmPaddedCols(config, operand) != GemmStoredCols(config, operand);
}

// Y [rows, padded_cols] = X [rows, cols], zeros in columns cols and on.
// InvalidArgument for sizes that are not positive or padded_cols < cols.
absl::StatusOr<Program> PadRowsProgram(int64_t rows, int64_t cols,
                                       int64_t padded_cols, DataType dtype);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_GEMM_PADDED_ROWS_H_
