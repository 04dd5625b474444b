// The generated code of one listed kernel (listed_kernels.h) for one arch,
// as the before / after dumps of a refactoring (dump_generated_cuda.cc) and
// the codegen goldens (tests/codegen/codegen_golden_test.cc) write it.
//
//   GeneratedCode g = GenerateCode(kernel, "sm_90a");
//   g.cuda  // "// entry: gemm_kernel\n// options: ...\n// headers: ...\n..."
//   g.ptx   // the PTX emitter's text; empty where NVRTC compiles it
#ifndef TESSEL_TESTS_TOOLS_GENERATED_CODE_H_
#define TESSEL_TESTS_TOOLS_GENERATED_CODE_H_

#include <string>
#include <vector>

#include "jit/nvrtc.h"
#include "tests/tools/listed_kernels.h"

namespace tessel::listing {

struct GeneratedCode {
  // The entry, the normalized NVRTC options and the header names as
  // comments, then the CUDA source; or "build failed: <status>" /
  // "lowering failed: <status>".
  std::string cuda;
  std::string ptx;
  std::vector<jit::CudaHeader> headers;
  bool ok() const { return cuda.starts_with("// entry: "); }
};

GeneratedCode GenerateCode(const ListedKernel& kernel, const std::string& arch);

}  // namespace tessel::listing

#endif  // TESSEL_TESTS_TOOLS_GENERATED_CODE_H_
