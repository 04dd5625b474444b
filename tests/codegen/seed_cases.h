// The seed programs (tests/dsl/seed_programs.h) as test cases: each at a size
// that is a multiple of its tiles and at a ragged one, with its arguments in
// the program's parameter order, the reference run on the CPU interpreter,
// and the tolerance the GPU result must meet against that reference.
//
//   for (const SeedCase& c : SeedCases()) {
//     absl::StatusOr<Program> p = c.make();
//     absl::StatusOr<std::vector<HostTensor>> initial = InitialArguments(c);
//     std::vector<HostTensor> reference = *initial;
//     ASSERT_TRUE(InterpretInPlace(*p, reference).ok());
//     ... launch on the GPU with `initial`, compare each output ...
//   }
//
// Used by seed_gpu_test.cc (the launch) and seed_cpu_test.cc (everything but
// the launch, so CI without a GPU exercises it).
#ifndef TESSEL_TESTS_CODEGEN_SEED_CASES_H_
#define TESSEL_TESTS_CODEGEN_SEED_CASES_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/host_tensor.h"
#include "tessel/program.h"
#include "tessel/testing.h"

namespace tessel::seed_test {

enum class Role {
  kInput,        // random, never zero
  kOutput,       // plainly stored: starts as NaN, so an unwritten element shows
  kAccumulated,  // atomically added into: random start, the same on both sides
};

struct Argument {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  Role role;
  testing::RandomOptions random = {};
};

struct SeedCase {
  std::string name;  // a gtest parameter name: letters, digits, '_'
  std::function<absl::StatusOr<Program>()> make;
  std::vector<Argument> arguments;  // in the program's parameter order
  // |gpu - interpreter| <= atol + rtol * |interpreter|, per output element.
  double rtol;
  double atol;
  // What the case is, printed when it fails (optional).
  std::string description;
  // Seeds the random inputs; 0: the case's index in SeedCases().
  uint64_t input_seed = 0;
};

// Every seed program at two sizes (see seed_cases.cc for the sizes and why
// each tolerance is what it is).
const std::vector<SeedCase>& SeedCases();

// The arguments before the run: inputs random (seeded by case and position),
// outputs NaN, accumulated outputs random.
absl::StatusOr<std::vector<HostTensor>> InitialArguments(const SeedCase& c);

// Runs the interpreter on `arguments` (updated in place) and checks that it
// left no output element NaN or infinite: the reference must be complete.
absl::Status InterpretInPlace(const Program& program,
                              std::vector<HostTensor>& arguments);

void PrintTo(const SeedCase& c, std::ostream* os);

}  // namespace tessel::seed_test

#endif  // TESSEL_TESTS_CODEGEN_SEED_CASES_H_
