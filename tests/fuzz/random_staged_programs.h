// Seeded random element-wise tile programs, the third shape users write
// beside GEMMs and row kernels (random_tile_programs.h): a tile of X (2-D,
// or 3-D with a batch axis on the grid's z) staged into a fragment, shared
// memory or both; math on each element (compositions of ReLU, select, tanh,
// sigmoid, exp2, sqrt, with a bias vector, the element's own indices or a
// scalar variable); written out as it is or transposed, through a fragment
// or shared memory, in another dtype; maybe every element added (or its
// maximum taken) atomically into a row vector. Ragged sizes, and dims that
// are symbolic (T::dim) a third of the time. Every program is valid: the
// interpreter runs it and the GPU must match it.
//
//   for (const seed_test::SeedCase& c : RandomStagedCases(seed, 32)) ...
//
// random_gpu_test.cc runs them on the GPU against the interpreter;
// random_tile_programs_test.cc (CI, no GPU) interprets them and lowers them
// for sm_90a and sm_80.
#ifndef TESSEL_TESTS_FUZZ_RANDOM_STAGED_PROGRAMS_H_
#define TESSEL_TESTS_FUZZ_RANDOM_STAGED_PROGRAMS_H_

#include <cstdint>
#include <vector>

#include "tests/codegen/seed_cases.h"

namespace tessel::fuzz {

// `count` cases drawn from `seed`; the same seed gives the same cases.
std::vector<seed_test::SeedCase> RandomStagedCases(uint64_t seed, int count);

}  // namespace tessel::fuzz

#endif  // TESSEL_TESTS_FUZZ_RANDOM_STAGED_PROGRAMS_H_
