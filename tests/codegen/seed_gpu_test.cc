// Each seed program on the GPU against the CPU interpreter, on random
// inputs, at sizes both multiples and not multiples of the tiles (the cases
// and their tolerances: seed_cases.cc). Skips without a GPU; CI runs the rest
// of the way (interpreter, compile for sm_90a) in seed_cpu_test.cc.
#include <gtest/gtest.h>

#include "tessel/testing.h"
#include "tests/codegen/seed_case_on_gpu.h"

namespace tessel::seed_test {
namespace {

class SeedGpu : public ::testing::TestWithParam<SeedCase> {};

TEST_P(SeedGpu, MatchesInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  ExpectGpuMatchesInterpreter(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedGpu, ::testing::ValuesIn(SeedCases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessel::seed_test
