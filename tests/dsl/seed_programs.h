// The seed kernels, built with the DSL the way a user writes them. Shared by
// the golden tests here and by the interpreter, pass and codegen suites.
//
//   #include "tests/dsl/seed_programs.h"
//   absl::StatusOr<tessel::Program> p = tessel::seed::TiledGemm(256, 256, 128);
//   const tessel::ir::Program& ir = p->ir();
//
// Link target: tessel_seed_programs (tests/dsl/CMakeLists.txt).
// Tensor layouts: GEMM A [M, K], B [K, N], C [M, N], row-major. Linear
// attention Q, K [B, S, H, DK], V, dO [B, S, H, DV] (f16); O, dQ, dK, dV f32,
// which the kernels add into with atomics, so they must start at zero.
#ifndef TESSEL_TESTS_DSL_SEED_PROGRAMS_H_
#define TESSEL_TESTS_DSL_SEED_PROGRAMS_H_

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::seed {

struct GemmTile {
  int m = 128;
  int n = 128;
  int k = 32;
  int num_stages = 3;
  int threads = 128;
};

// C = A * B, f16 in, f32 accumulate, C of dtype c_dtype.
absl::StatusOr<Program> TiledGemm(int M, int N, int K, GemmTile t = {},
                                  DataType c_dtype = f16);

// As TiledGemm with a symbolic M (T::dim("M"), bound at launch).
absl::StatusOr<Program> TiledGemmDynamicM(int N, int K, GemmTile t = {});

// Split-K: grid z splits K; each block atomically adds its partial product
// into C (f32, zero-initialised by the caller).
absl::StatusOr<Program> SplitKGemm(int M, int N, int K, int split_k,
                                   GemmTile t = {});

// The seed's fused_chunk_kernel: a 2-stage pipelined GEMM loop with explicit
// mbarrier_arrive / mbarrier_wait_parity between the load and compute stages.
absl::StatusOr<Program> MbarrierPipelinedGemm(int M, int N, int K);

struct LinearAttentionTile {
  int chunk = 64;  // rows of the sequence per step
  int bk = 64;     // DK tile of one block
  int bv = 64;     // DV tile of one block
};

// Causal linear attention forward, O += per DK tile (atomic_add into O).
absl::StatusOr<Program> LinearAttentionForward(int B, int S, int H, int DK,
                                               int DV,
                                               LinearAttentionTile t = {});

// Fused-chunk backward: dQ (forward sweep), dK and dV (reverse sweep), each
// added into global memory with atomic_add.
absl::StatusOr<Program> LinearAttentionBackward(int B, int S, int H, int DK,
                                                int DV,
                                                LinearAttentionTile t = {});

// Row softmax of X [M, N] (f32) into Y, one block per 32 rows: reduce_max,
// exp2, reduce_sum, an alloc_var and a T::If; plus a row cumsum into Z.
absl::StatusOr<Program> RowSoftmaxCumsum(int M, int N);

}  // namespace tessel::seed

#endif  // TESSEL_TESTS_DSL_SEED_PROGRAMS_H_
