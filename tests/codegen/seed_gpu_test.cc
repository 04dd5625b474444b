// Each seed program on the GPU against the CPU interpreter, on random
// inputs, at sizes both multiples and not multiples of the tiles (the cases
// and their tolerances: seed_cases.cc). Skips without a GPU; CI runs the rest
// of the way (interpreter, compile for sm_90a) in seed_cpu_test.cc.
#include <gtest/gtest.h>

#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/codegen/seed_cases.h"

namespace tessel::seed_test {
namespace {

class SeedGpu : public ::testing::TestWithParam<SeedCase> {};

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

INSTANTIATE_TEST_SUITE_P(Seeds, SeedGpu, ::testing::ValuesIn(SeedCases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessel::seed_test
