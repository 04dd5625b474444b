// Row reductions of register tiles on the GPU against the interpreter: every
// case of row_reduce_cases.h (reduce kinds, clear or not, rows within a
// warp, over warps, tail rows, ragged rows, f16 / bf16 / f32), and the
// broadcasts of broadcast_cases.h (a GEMM's bias + ReLU epilogue, column
// statistics).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/broadcast_cases.h"
#include "tests/codegen/row_reduce_cases.h"

namespace tessel::testing {
namespace {

// Runs the program on the interpreter and on the GPU from the same
// arguments and compares every argument after the first (the outputs):
// |gpu - interpreter| <= 1e-4 + rel * (|interpreter| + slack).
void MatchesTheInterpreter(const Program& program,
                           const std::vector<HostTensor>& args, double rel,
                           double slack) {
  std::vector<HostTensor> want = args;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(program, ptrs).ok());
  absl::StatusOr<CompiledKernel> kernel =
      compile(program, {.target = Target::detect()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<HostTensor> got = args;
  std::vector<jit::DeviceBuffer> buffers;
  std::vector<TensorView> views;
  for (const HostTensor& t : got) {
    absl::StatusOr<jit::DeviceBuffer> b =
        jit::DeviceBuffer::Allocate(t.num_bytes());
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(b->CopyFromHost(t.data(), t.num_bytes()).ok());
    views.push_back(TensorView::Contiguous(b->ptr(), t.dtype(), t.shape()));
    buffers.push_back(*std::move(b));
  }
  ASSERT_TRUE(kernel->launch(views).ok());
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  for (size_t i = 1; i < got.size(); ++i) {
    ASSERT_TRUE(buffers[i].CopyToHost(got[i].data(), got[i].num_bytes()).ok());
    int bad = 0;
    for (int64_t e = 0; e < got[i].num_elements(); ++e) {
      double g = got[i].get_flat(e), w = want[i].get_flat(e);
      double tol = 1e-4 + rel * (std::fabs(w) + slack);
      if (!(std::fabs(g - w) <= tol) && bad++ < 5)
        ADD_FAILURE() << program.name() << " output " << i << " element " << e
                      << ": gpu " << g << ", interpreter " << w;
    }
    EXPECT_EQ(bad, 0) << program.name() << " output " << i;
  }
}

HostTensor Random(DataType t, std::vector<int64_t> shape, uint32_t seed) {
  HostTensor x = *HostTensor::Create(t, std::move(shape));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.set_flat(i, (seed >> 8) / double(1 << 24) * 2.0 - 1.0);
  }
  return x;
}

class RowReduceGpu : public ::testing::TestWithParam<RowCase> {};

TEST_P(RowReduceGpu, MatchesTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const RowCase& c = GetParam();
  absl::StatusOr<Program> program = RowReduceProgram(c);
  ASSERT_TRUE(program.ok()) << program.status();
  // Sums combine in another order than the interpreter's; 16-bit outputs
  // round (Y = X - R: slack for |R| up to ~8).
  const double rel = c.dtype == DataType::kF32   ? 1e-5
                     : c.dtype == DataType::kF16 ? 2e-3
                                                 : 1e-2;
  MatchesTheInterpreter(*program,
                        {Random(c.dtype, {c.M, c.N}, 12345),
                         *HostTensor::Create(DataType::kF32, {c.M}),
                         *HostTensor::Create(c.dtype, {c.M, c.bn})},
                        rel, 8.0);
}

class RowScanGpu : public ::testing::TestWithParam<ScanCase> {};

TEST_P(RowScanGpu, MatchesTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const ScanCase& c = GetParam();
  absl::StatusOr<Program> program = RowCumsumProgram(c);
  ASSERT_TRUE(program.ok()) << program.status();
  // Prefix sums of up to N values in [-1, 1], summed in another order.
  MatchesTheInterpreter(*program,
                        {Random(c.dtype, {c.M, c.N}, 77),
                         *HostTensor::Create(DataType::kF32, {c.M, c.N})},
                        1e-5, 16.0);
}

INSTANTIATE_TEST_SUITE_P(Cases, RowScanGpu, ::testing::ValuesIn(ScanCases()),
                         [](const auto& info) { return info.param.name; });

TEST(UnitDimGpu, OneRowTilesMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  absl::StatusOr<Program> program = UnitRowProgram(3, 45);
  ASSERT_TRUE(program.ok()) << program.status();
  MatchesTheInterpreter(
      *program,
      {Random(DataType::kF32, {3, 45}, 5), Random(DataType::kF32, {3, 45}, 6),
       *HostTensor::Create(DataType::kF32, {3, 45})},
      1e-6, 0.0);
}

TEST(BroadcastGpu, GemmBiasReluMatchesTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const int M = 256, N = 384, K = 96;
  absl::StatusOr<Program> program = GemmBiasReluProgram(M, N, K);
  ASSERT_TRUE(program.ok()) << program.status();
  MatchesTheInterpreter(
      *program,
      {Random(DataType::kF16, {M, K}, 1), Random(DataType::kF16, {K, N}, 2),
       Random(DataType::kF16, {N}, 3),
       *HostTensor::Create(DataType::kF32, {M, N})},
      1e-4, 4.0);
}

TEST(BroadcastGpu, ColumnStatisticsMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  absl::StatusOr<Program> program = ColumnMaxProgram(40, 512);
  ASSERT_TRUE(program.ok()) << program.status();
  MatchesTheInterpreter(*program,
                        {Random(DataType::kF16, {40, 512}, 4),
                         *HostTensor::Create(DataType::kF32, {40, 512})},
                        1e-5, 8.0);
}

INSTANTIATE_TEST_SUITE_P(Cases, RowReduceGpu, ::testing::ValuesIn(RowCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tessel::testing
