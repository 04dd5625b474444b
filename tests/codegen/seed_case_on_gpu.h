// A seed-test case (seed_cases.h) run on this machine's GPU and compared
// with the interpreter: the check seed_gpu_test.cc and
// tests/fuzz/random_gpu_test.cc share.
#ifndef TESSEL_TESTS_CODEGEN_SEED_CASE_ON_GPU_H_
#define TESSEL_TESTS_CODEGEN_SEED_CASE_ON_GPU_H_

#include <gtest/gtest.h>

#include <vector>

#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/codegen/seed_cases.h"

namespace tessel::seed_test {

inline void ExpectGpuMatchesInterpreter(const SeedCase& c) {
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
  absl::StatusOr<std::vector<HostTensor>> gpu =
      testing::RunOnGpu(*program, *initial);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (size_t i = 0; i < c.arguments.size(); ++i) {
    // Inputs too, exactly: a kernel that writes its inputs is wrong.
    SCOPED_TRACE(c.arguments[i].name);
    const bool input = c.arguments[i].role == Role::kInput;
    testing::ExpectAllClose((*gpu)[i], reference[i], input ? 0 : c.rtol,
                            input ? 0 : c.atol);
  }
}

}  // namespace tessel::seed_test

#endif  // TESSEL_TESTS_CODEGEN_SEED_CASE_ON_GPU_H_
