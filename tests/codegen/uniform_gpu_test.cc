// Block-uniform variables on the GPU: the grouped rows of uniform_cases.h
// (each block finds its group by a serial scan) against the interpreter.
// With TESSEL_PTX=0 the same through NVRTC.
#include <gtest/gtest.h>

#include <vector>

#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/codegen/uniform_cases.h"

namespace tessel::testing {
namespace {

class UniformGpu : public ::testing::TestWithParam<bool> {};

// Guarded by the group, and not (the loop the kernel's own).
TEST_P(UniformGpu, GroupedRowsMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  constexpr int kGroups = 24, kBlocks = 48;
  absl::StatusOr<Program> program =
      GroupedRowsProgram(kGroups, kBlocks, GetParam());
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> args = MakeGroupedRowsArgs(kGroups, kBlocks);
  std::vector<HostTensor> want = args;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  absl::StatusOr<std::vector<HostTensor>> got = RunOnGpu(*program, args);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectAllClose((*got)[3], want[3], 1e-3, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Uniform, UniformGpu, ::testing::Bool());

}  // namespace
}  // namespace tessel::testing
