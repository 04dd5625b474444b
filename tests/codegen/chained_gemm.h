// Two chained gemms in one block, the flash-attention P V pattern: S = A B
// (f32 accumulator), P = f16(S) * 0.5 in a register fragment, O = P C, with
// P the register A operand of the second gemm (or a shared tile).
//
//   absl::StatusOr<Program> p = testing::ChainedGemm({.M = 128});
//   // parameters: A [M, K], B [K, N], C [N, D] f16; O [M, D] f32
//
// The warp policies choose how each gemm spreads over the warps: the
// register operand needs both gemms to give every warp whole rows
// (kFullRow); other choices are the errors the tests expect.
#ifndef TESSEL_TESTS_CODEGEN_CHAINED_GEMM_H_
#define TESSEL_TESTS_CODEGEN_CHAINED_GEMM_H_

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

struct ChainedGemmShape {
  int M = 128, K = 64, N = 64, D = 64;
  int block_m = 64;
  int threads = 128;
  GemmWarpPolicy first = GemmWarpPolicy::kFullRow;
  GemmWarpPolicy second = GemmWarpPolicy::kFullRow;
  bool p_in_registers = true;
};

absl::StatusOr<Program> ChainedGemm(const ChainedGemmShape& s);

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_CHAINED_GEMM_H_
