// Each seed program on the GPU against the CPU interpreter, on random
// inputs, at sizes both multiples and not multiples of the tiles (the cases
// and their tolerances: seed_cases.cc). Skips without a GPU; CI runs the rest
// of the way (interpreter, compile for sm_90a) in seed_cpu_test.cc.
#include <gtest/gtest.h>

#include "jit/device_buffer.h"
#include "tessel/compile.h"
#include "tessel/testing.h"
#include "tests/codegen/seed_cases.h"

namespace tessel::seed_test {
namespace {

class SeedGpu : public ::testing::TestWithParam<SeedCase> {};

// Compiles for this machine's GPU, uploads `initial`, launches once, and
// returns every argument as the device left it.
absl::StatusOr<std::vector<HostTensor>> RunOnGpu(
    const Program& program, const std::vector<HostTensor>& initial) {
  absl::StatusOr<CompiledKernel> kernel =
      compile(program, {.target = Target::detect()});
  if (!kernel.ok()) return kernel.status();
  std::vector<jit::DeviceBuffer> buffers;
  std::vector<TensorView> views;
  for (const HostTensor& t : initial) {
    absl::StatusOr<jit::DeviceBuffer> b =
        jit::DeviceBuffer::Allocate(t.num_bytes());
    if (!b.ok()) return b.status();
    if (absl::Status s = b->CopyFromHost(t.data(), t.num_bytes()); !s.ok()) {
      return s;
    }
    views.push_back(TensorView::Contiguous(b->ptr(), t.dtype(), t.shape()));
    buffers.push_back(*std::move(b));
  }
  if (absl::Status s = kernel->launch(views); !s.ok()) return s;
  if (absl::Status s = jit::SynchronizeStream(nullptr); !s.ok()) return s;
  std::vector<HostTensor> result;
  for (size_t i = 0; i < initial.size(); ++i) {
    HostTensor t(initial[i].dtype(), initial[i].shape());
    if (absl::Status s = buffers[i].CopyToHost(t.data(), t.num_bytes());
        !s.ok()) {
      return s;
    }
    result.push_back(std::move(t));
  }
  return result;
}

TEST_P(SeedGpu, MatchesInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const SeedCase& c = GetParam();
  absl::StatusOr<Program> program = c.make();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::vector<HostTensor>> initial = InitialArguments(c);
  ASSERT_TRUE(initial.ok()) << initial.status();

  // Both sides start from the same arguments: random inputs, NaN plain
  // outputs (an element the GPU does not write stays NaN and fails), the
  // same random values under the atomically accumulated outputs.
  std::vector<HostTensor> reference = *initial;
  absl::Status s = InterpretInPlace(*program, reference);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<std::vector<HostTensor>> gpu = RunOnGpu(*program, *initial);
  ASSERT_TRUE(gpu.ok()) << gpu.status();

  for (size_t i = 0; i < c.arguments.size(); ++i) {
    // Inputs too, exactly: a kernel that writes its inputs is wrong.
    SCOPED_TRACE(c.arguments[i].name);
    const bool input = c.arguments[i].role == Role::kInput;
    testing::ExpectAllClose((*gpu)[i], reference[i], input ? 0 : c.rtol,
                            input ? 0 : c.atol);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedGpu, ::testing::ValuesIn(SeedCases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessel::seed_test
