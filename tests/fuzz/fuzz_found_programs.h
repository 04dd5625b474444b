// Programs a random-program fuzz found (session 17) that the interpreter
// runs and the GPU path refused: a shared tile allocated after a
// warp-specialized Pipelined loop (never declared on sm_90a), a row cumsum
// into a wider or narrower type (the carry mixed f16 and float), INT_MIN as
// an i32 constant (a long long literal), a register A operand under the
// default warp policy (sm_80's square grid refused it). As seed-test cases:
// random_tile_programs_test.cc compiles them for both archs (CI),
// random_gpu_test.cc runs them against the interpreter.
#ifndef TESSEL_TESTS_FUZZ_FUZZ_FOUND_PROGRAMS_H_
#define TESSEL_TESTS_FUZZ_FUZZ_FOUND_PROGRAMS_H_

#include <vector>

#include "tests/codegen/seed_cases.h"

namespace tessel::fuzz {

std::vector<seed_test::SeedCase> FuzzFoundCases();

}  // namespace tessel::fuzz

#endif  // TESSEL_TESTS_FUZZ_FUZZ_FOUND_PROGRAMS_H_
