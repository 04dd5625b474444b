// Seeded random tile programs of the shapes users write, as seed-test cases
// (tests/codegen/seed_cases.h): GEMMs (f16 / bf16, either operand transposed,
// pipelined or not, tiles of 64 to 256, an epilogue that adds a bias vector,
// applies a ReLU or subtracts a row maximum) and row kernels (a reduction of
// each kind over row chunks, its broadcast back over the rows, cumsum,
// column sums added atomically into a vector), at ragged sizes. Every
// program is valid: the interpreter runs it and the GPU must match it.
//
//   for (const seed_test::SeedCase& c : RandomTileCases(seed, 40)) ...
//
// random_gpu_test.cc runs them on the GPU against the interpreter;
// random_tile_programs_test.cc (CI, no GPU) interprets them and compiles a
// few for sm_90a and sm_80.
#ifndef TESSEL_TESTS_FUZZ_RANDOM_TILE_PROGRAMS_H_
#define TESSEL_TESTS_FUZZ_RANDOM_TILE_PROGRAMS_H_

#include <cstdint>
#include <vector>

#include "tests/codegen/seed_cases.h"

namespace tessel::fuzz {

// `count` cases drawn from `seed`; the same seed gives the same cases.
std::vector<seed_test::SeedCase> RandomTileCases(uint64_t seed, int count);

}  // namespace tessel::fuzz

#endif  // TESSEL_TESTS_FUZZ_RANDOM_TILE_PROGRAMS_H_
