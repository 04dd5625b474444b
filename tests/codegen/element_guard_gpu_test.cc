// The boundary rule for global element accesses on the GPU: the ragged
// and halo programs of element_guard_cases.h against the interpreter, each
// tensor in a device allocation with a canary row past its end that must come
// back untouched (a skipped store or atomic writes nothing past the edge). With
// TESSEL_PTX=0 the same through NVRTC.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/element_guard_cases.h"

namespace tessel::testing {
namespace {

constexpr float kCanary = -12345.0f;

// Runs `program` over `shapes` (f32) on the GPU and in the interpreter:
// every element equal, and the canaries past each tensor untouched.
void ExpectGpuMatchesInterpreter(
    const Program& program, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<HostTensor> args;
  for (const std::vector<int64_t>& shape : shapes) {
    HostTensor t = *HostTensor::Create(DataType::kF32, shape);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      t.set_flat(i, 0.25 * static_cast<double>((i * 7) % 23) - 2.0);
    args.push_back(std::move(t));
  }
  std::vector<HostTensor> want = args;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(program, ptrs).ok());

  absl::StatusOr<CompiledKernel> kernel =
      compile(program, {.target = Target::detect()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // Each tensor, then 64 canary rows (more than any index past M the
  // programs form reaches).
  constexpr int64_t kTail = 64 * 16;
  std::vector<jit::DeviceBuffer> buffers;
  std::vector<TensorView> views;
  for (const HostTensor& t : args) {
    std::vector<float> host(t.num_elements() + kTail, kCanary);
    std::memcpy(host.data(), t.data(), t.num_bytes());
    absl::StatusOr<jit::DeviceBuffer> b =
        jit::DeviceBuffer::Allocate(host.size() * sizeof(float));
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(b->CopyFromHost(host.data(), host.size() * sizeof(float)).ok());
    views.push_back(TensorView::Contiguous(b->ptr(), t.dtype(), t.shape()));
    buffers.push_back(*std::move(b));
  }
  ASSERT_TRUE(kernel->launch(views).ok());
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  for (size_t a = 0; a < args.size(); ++a) {
    std::vector<float> got(args[a].num_elements() + kTail);
    ASSERT_TRUE(
        buffers[a].CopyToHost(got.data(), got.size() * sizeof(float)).ok());
    int bad = 0;
    for (int64_t e = 0; e < args[a].num_elements(); ++e) {
      if (got[e] != want[a].get_flat(e) && bad++ < 5)
        ADD_FAILURE() << "argument " << a << " element " << e << ": gpu "
                      << got[e] << ", interpreter " << want[a].get_flat(e);
    }
    for (int64_t e = args[a].num_elements(); e < int64_t(got.size()); ++e) {
      if (got[e] != kCanary && bad++ < 5)
        ADD_FAILURE() << "argument " << a << " written past its end at element "
                      << e;
    }
    EXPECT_EQ(bad, 0) << "argument " << a;
  }
}

class ElementGuardGpu : public ::testing::TestWithParam<int> {};

TEST_P(ElementGuardGpu, RaggedEdgesMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const int64_t M = GetParam();
  SCOPED_TRACE(M);
  absl::StatusOr<Program> program = RaggedElementsProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  ExpectGpuMatchesInterpreter(*program, {{M, 16}, {M, 16}, {M}, {M}});
}

// Copies starting before row 0 read zeros there and skip their stores.
TEST_P(ElementGuardGpu, HaloCopiesMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const int64_t M = GetParam();
  SCOPED_TRACE(M);
  absl::StatusOr<Program> program = HaloCopyProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  ExpectGpuMatchesInterpreter(*program, {{M, 16}, {M, 16}, {M, 16}});
}

// 70: a last block of 6 rows; 64: whole blocks (the reads at row M still
// pass the edge); 1 and 33: one row, and one past a block.
INSTANTIATE_TEST_SUITE_P(Rows, ElementGuardGpu,
                         ::testing::Values(1, 33, 64, 70));

}  // namespace
}  // namespace tessel::testing
