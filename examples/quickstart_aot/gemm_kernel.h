// The quickstart's GEMM (docs/quickstart.md): C (f32) = A (f16) * B (f16),
// one 128x128 tile of C per block; registered as "quickstart_gemm" with
// params M, N, K for tessel-aot (gemm_kernel.cc).
#ifndef QUICKSTART_AOT_GEMM_KERNEL_H_
#define QUICKSTART_AOT_GEMM_KERNEL_H_

#include "tessel/tessel.h"

absl::StatusOr<tessel::Program> QuickstartGemm(int m, int n, int k);

#endif  // QUICKSTART_AOT_GEMM_KERNEL_H_
