// GEMM seed programs on the interpreter against float64 references: ragged
// sizes (boundary rule), a symbolic M, split-K with atomics, the explicit
// mbarrier pipeline, and the time of a 256^3 GEMM.
#include <chrono>
#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/interp/interpreter.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"
#include "tests/interp/test_util.h"

namespace tessel {
namespace {

using interp_test::ExpectBitwiseEqual;
using interp_test::ExpectClose;
using interp_test::IntegerTensor;
using interp_test::MatMul;
using interp_test::RandomTensor;

// Sum of |a_ik * b_kj|: the scale of the rounding error of C_ij.
std::vector<double> AbsMatMul(const HostTensor& a, const HostTensor& b) {
  HostTensor aa = a, bb = b;
  for (int64_t i = 0; i < aa.num_elements(); ++i)
    aa.set_flat(i, std::fabs(a.get_flat(i)));
  for (int64_t i = 0; i < bb.num_elements(); ++i)
    bb.set_flat(i, std::fabs(b.get_flat(i)));
  return MatMul(aa, bb);
}

TEST(GemmTest, RaggedSizesMatchFloat64) {
  // None of M, N, K is a multiple of the 128x128x32 tile.
  const int M = 200, N = 130, K = 70;
  absl::StatusOr<Program> prog = seed::TiledGemm(M, N, K, {}, f32);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a = RandomTensor(f16, {M, K}, 1);
  HostTensor b = RandomTensor(f16, {K, N}, 2);
  HostTensor c(f32, {M, N});
  c.fill(12345);  // every element must be overwritten
  ASSERT_TRUE(interpret(*prog, {&a, &b, &c}).ok());
  // f32 accumulation of exact f16 products: error below K ulps of the sum of
  // the magnitudes.
  ExpectClose(c, MatMul(a, b), K * 6e-8, 0, AbsMatMul(a, b));
}

TEST(GemmTest, RaggedIntegerValuesAreExactInF16Output) {
  const int M = 150, N = 200, K = 100;
  absl::StatusOr<Program> prog = seed::TiledGemm(M, N, K);  // C is f16
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a = IntegerTensor(f16, {M, K}, 3);
  HostTensor b = IntegerTensor(f16, {K, N}, 4);
  HostTensor c(f16, {M, N});
  ASSERT_TRUE(interpret(*prog, {&a, &b, &c}).ok());
  ExpectClose(c, MatMul(a, b), 0, 0);  // |C| <= 1600: exact in f16
}

TEST(GemmTest, SymbolicMIsBoundFromTheArguments) {
  const int N = 96, K = 64;
  absl::StatusOr<Program> prog = seed::TiledGemmDynamicM(N, K);
  ASSERT_TRUE(prog.ok()) << prog.status();
  for (int M : {1, 130, 300}) {
    HostTensor a = IntegerTensor(f16, {M, K}, 5 + M);
    HostTensor b = IntegerTensor(f16, {K, N}, 6 + M);
    HostTensor c(f16, {M, N});
    ASSERT_TRUE(interpret(*prog, {&a, &b, &c}).ok()) << "M = " << M;
    ExpectClose(c, MatMul(a, b), 0, 0);
  }
}

TEST(GemmTest, SplitKAddsPartialProductsWithAtomics) {
  const int M = 130, N = 100, K = 200, split_k = 3;
  absl::StatusOr<Program> prog = seed::SplitKGemm(M, N, K, split_k);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a = RandomTensor(f16, {M, K}, 7);
  HostTensor b = RandomTensor(f16, {K, N}, 8);
  HostTensor serial(f32, {M, N}), threaded(f32, {M, N});
  ASSERT_TRUE(
      interp::Run(prog->ir(), {&a, &b, &serial}, {.num_threads = 1}).ok());
  ASSERT_TRUE(
      interp::Run(prog->ir(), {&a, &b, &threaded}, {.num_threads = 4}).ok());
  ExpectClose(serial, MatMul(a, b), K * 6e-8, 0, AbsMatMul(a, b));
  // Threads change nothing: atomics are applied in block order.
  ExpectBitwiseEqual(serial, threaded);

  // Atomics add to what is there (the caller's zero-initialisation matters).
  HostTensor ones(f32, {M, N});
  ones.fill(1.0);
  ASSERT_TRUE(interpret(*prog, {&a, &b, &ones}).ok());
  std::vector<double> want = MatMul(a, b);
  for (double& w : want) w += 1.0;
  ExpectClose(ones, want, K * 6e-8, 1e-6, AbsMatMul(a, b));
}

TEST(GemmTest, ExplicitMbarrierPipelineRuns) {
  const int M = 100, N = 70, K = 150;  // 5 chunks: both barriers, both parities
  absl::StatusOr<Program> prog = seed::MbarrierPipelinedGemm(M, N, K);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a = IntegerTensor(f16, {M, K}, 9);
  HostTensor b = IntegerTensor(f16, {K, N}, 10);
  HostTensor c(f32, {M, N});
  absl::Status s = interpret(*prog, {&a, &b, &c});
  ASSERT_TRUE(s.ok()) << s;
  ExpectClose(c, MatMul(a, b), 0, 0);
}

TEST(GemmTest, Time256Cubed) {
  absl::StatusOr<Program> prog = seed::TiledGemm(256, 256, 256);  // 128x128x32
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor a = RandomTensor(f16, {256, 256}, 11);
  HostTensor b = RandomTensor(f16, {256, 256}, 12);
  HostTensor c(f16, {256, 256});
  for (int threads : {1, 0}) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s =
        interp::Run(prog->ir(), {&a, &b, &c}, {.num_threads = threads});
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    ASSERT_TRUE(s.ok()) << s;
    std::printf(
        "256^3 f16 GEMM (128x128x32 tiles), %s: %.1f ms (compile + run)\n",
        threads == 1 ? "1 thread" : "all hardware threads", ms);
  }
  ExpectClose(c, MatMul(a, b), 256 * 6e-8 + 1e-3, 0, AbsMatMul(a, b));
}

}  // namespace
}  // namespace tessel
