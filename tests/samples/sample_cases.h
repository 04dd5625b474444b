// The sample workloads the sample tests run: small and ragged sizes of every
// sample, by name.
//
//   for (const SampleCase& c : SmallCases()) {
//     absl::StatusOr<Workload> w = c.make();
//     ...
//   }
#ifndef TESSEL_TESTS_SAMPLES_SAMPLE_CASES_H_
#define TESSEL_TESTS_SAMPLES_SAMPLE_CASES_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/workload.h"

namespace tessel::samples {

struct SampleCase {
  std::string name;  // a gtest-friendly identifier: "gemm_nn_f16_ragged"
  std::function<absl::StatusOr<Workload>()> make;
};

inline std::ostream& operator<<(std::ostream& os, const SampleCase& c) {
  return os << c.name;
}

// Every sample at sizes the interpreter runs in well under a second each,
// including ragged (non-tile-multiple) sizes.
std::vector<SampleCase> SmallCases();

// A case the CUDA codegen cannot compile yet: the compile test expects the
// failure (and fails once it compiles, asking for the entry to go); the GPU
// test skips it.
struct KnownGap {
  const char* case_part;  // a substring of SampleCase::name
  const char* arch;       // "" = every arch
  const char* error;      // a substring of the compile error
  const char* missing;    // the codegen feature the sample needs
};

// The gap of case `name` on `arch` ("sm_80", "sm_90a"), or nullptr.
const KnownGap* FindCodegenGap(const std::string& name,
                               const std::string& arch);

}  // namespace tessel::samples

#endif  // TESSEL_TESTS_SAMPLES_SAMPLE_CASES_H_
