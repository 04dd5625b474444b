// Random tile programs (random_tile_programs.h) on the GPU against the CPU
// interpreter: GEMMs and row kernels at ragged sizes, every output within
// its tolerance, every input left as it was. TESSEL_FUZZ_SEED draws other
// programs, TESSEL_FUZZ_SCALE more of them. Skips without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/fuzz/fuzz_budget.h"
#include "tests/fuzz/random_tile_programs.h"

namespace tessel::fuzz {
namespace {

using seed_test::Role;
using seed_test::SeedCase;

class RandomGpu : public ::testing::TestWithParam<SeedCase> {};

TEST_P(RandomGpu, MatchesInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  const SeedCase& c = GetParam();
  absl::StatusOr<Program> program = c.make();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::vector<HostTensor>> initial =
      seed_test::InitialArguments(c);
  ASSERT_TRUE(initial.ok()) << initial.status();
  std::vector<HostTensor> reference = *initial;
  absl::Status s = seed_test::InterpretInPlace(*program, reference);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<std::vector<HostTensor>> gpu =
      testing::RunOnGpu(*program, *initial);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (size_t i = 0; i < c.arguments.size(); ++i) {
    SCOPED_TRACE(c.arguments[i].name);
    const bool input = c.arguments[i].role == Role::kInput;
    testing::ExpectAllClose((*gpu)[i], reference[i], input ? 0 : c.rtol,
                            input ? 0 : c.atol);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Random, RandomGpu,
    ::testing::ValuesIn(RandomTileCases(FuzzSeed(), 48 * FuzzBudget::Scale())),
    [](const ::testing::TestParamInfo<SeedCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace tessel::fuzz
