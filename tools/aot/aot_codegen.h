// The C++ tessel-aot writes (docs/aot.md): one header declaring a typed
// launch function per kernel, and one source holding the cubins (as bytes)
// and the functions' bodies, which check the tensors' shapes, pick the
// device's cubin, encode the TMA descriptors and launch through
// tessel::aot_runtime (tessel/aot_runtime.h).
//
//   AotKernel k{.function = "quickstart_gemm", .variants = {plan_sm90a}};
//   ASSIGN_OR_RETURN(AotSources out, GenerateAotSources({k}, {.header =
//                    "quickstart_kernels"}));
//   out.header;  // quickstart_kernels.h
//   out.source;  // quickstart_kernels.cc
//
// The text depends only on its inputs: the same manifest and cubins give
// the same bytes (no dates, no paths).
#ifndef TESSEL_TOOLS_AOT_AOT_CODEGEN_H_
#define TESSEL_TOOLS_AOT_AOT_CODEGEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/runtime/aot_plan.h"

namespace tessel::tools {

struct AotKernel {
  std::string function;     // a C++ identifier
  std::string description;  // the manifest entry ("gemm {"M":256,...}")
  // One per arch; every variant takes the same tensors.
  std::vector<runtime::AotKernelPlan> variants;
};

struct AotNames {
  std::string header;      // the file names' stem: <header>.h, <header>.cc
  std::string name_space;  // "" for the global namespace
  std::string manifest;    // named in the files' first line
};

struct AotSources {
  std::string header;
  std::string source;
};

// InvalidArgument when two functions share a name or a kernel's variants
// take different tensors.
absl::StatusOr<AotSources> GenerateAotSources(
    const std::vector<AotKernel>& kernels, const AotNames& names);

// `name` made a C++ identifier that is no keyword ("my-kernel" ->
// "my_kernel", "new" -> "new_").
std::string CppIdentifier(const std::string& name);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_AOT_AOT_CODEGEN_H_
