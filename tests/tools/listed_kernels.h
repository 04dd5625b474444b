// Every kernel tessel's own tests and samples build, by name: the kernels of
// a manifest (samples/kernels.json: the samples and the seed kernels, built
// per arch through the registry as tessel-warmup builds them), every seed
// case, every IR test program and every program the interpreter suites run.
// Shared by tessel_dump_generated_cuda (the before / after diff of a
// refactoring), tessel_dump_thread_memory and
// tessel_cpu_gpu_agreement_test (each compiles for sm_90a).
//
//   absl::StatusOr<tools::Manifest> m = tools::LoadManifest(path);
//   for (const ListedKernel& k : ListedKernels(*m)) k.program("sm_90a") ...
#ifndef TESSEL_TESTS_TOOLS_LISTED_KERNELS_H_
#define TESSEL_TESTS_TOOLS_LISTED_KERNELS_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/ir/program.h"
#include "tessel/compile.h"
#include "tools/manifest.h"

namespace tessel::listing {

using ProgramOf =
    std::function<absl::StatusOr<ir::Program>(const std::string& arch)>;

struct ListedKernel {
  std::string name;   // letters, digits, '_', '.': a file stem, a test name
  ProgramOf program;  // built per arch (a factory may pick tiles per target)
  CompileOptions options;          // the manifest's fast_math / lineinfo
  std::vector<std::string> archs;  // the manifest's limit; empty: every arch
  // Whether tessel's tests run it on the interpreter: the CPU target must
  // accept it too.
  bool runs_on_cpu = false;
};

inline void PrintTo(const ListedKernel& k, std::ostream* os) { *os << k.name; }

// In this order: manifest_<index>_<name>, seed_<case>, prog_<name>,
// interp_<name>.
std::vector<ListedKernel> ListedKernels(const tools::Manifest& manifest);
// The same for the manifest file at `path` (the dump tools' first argument).
absl::StatusOr<std::vector<ListedKernel>> ListedKernelsOfManifest(
    const std::string& path);

}  // namespace tessel::listing

#endif  // TESSEL_TESTS_TOOLS_LISTED_KERNELS_H_
