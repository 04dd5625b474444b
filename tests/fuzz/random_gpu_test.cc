// Random tile programs (random_tile_programs.h) on the GPU against the CPU
// interpreter: GEMMs, row kernels and staged element-wise kernels
// (random_staged_programs.h) at ragged sizes, every output within
// its tolerance, every input left as it was. TESSEL_FUZZ_SEED draws other
// programs, TESSEL_FUZZ_SCALE more of them. Skips without a GPU.
#include <gtest/gtest.h>

#include "tessel/testing.h"
#include "tests/codegen/seed_case_on_gpu.h"
#include "tests/fuzz/fuzz_budget.h"
#include "tests/fuzz/fuzz_found_programs.h"
#include "tests/fuzz/random_staged_programs.h"
#include "tests/fuzz/random_tile_programs.h"

namespace tessel::fuzz {
namespace {

using seed_test::SeedCase;

class RandomGpu : public ::testing::TestWithParam<SeedCase> {};

TEST_P(RandomGpu, MatchesInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  seed_test::ExpectGpuMatchesInterpreter(GetParam());
}

// Programs the broader fuzz found the GPU path refusing (compiled in CI by
// random_tile_programs_test.cc).
INSTANTIATE_TEST_SUITE_P(FuzzFound, RandomGpu,
                         ::testing::ValuesIn(FuzzFoundCases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

INSTANTIATE_TEST_SUITE_P(
    Random, RandomGpu,
    ::testing::ValuesIn(RandomTileCases(FuzzSeed(), 48 * FuzzBudget::Scale())),
    [](const ::testing::TestParamInfo<SeedCase>& info) {
      return info.param.name;
    });

INSTANTIATE_TEST_SUITE_P(Staged, RandomGpu,
                         ::testing::ValuesIn(RandomStagedCases(
                             FuzzSeed(), 32 * FuzzBudget::Scale())),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessel::fuzz
