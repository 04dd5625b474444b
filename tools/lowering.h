// What NVRTC compiles for one (program, arch): the step of tessel::compile()
// before NVRTC, which tessel-warmup needs on its own so that it can compute
// the cache key of an entry without compiling it.
//
//   ASSIGN_OR_RETURN(tessel::tools::LoweredKernel k,
//                    tessel::tools::LowerWithCodegen(program, {.arch =
//                    "sm_90a"}));
//   ASSIGN_OR_RETURN(std::string key,
//                    tessel::jit::ComputeCacheKey(k.source, k.options));
#ifndef TESSEL_TOOLS_LOWERING_H_
#define TESSEL_TOOLS_LOWERING_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "jit/nvrtc.h"
#include "tessel/program.h"
#include "tessel/target.h"

namespace tessel::tools {

struct LowerOptions {
  std::string arch;  // "sm_90a"
  bool fast_math = false;
  bool lineinfo = false;
  PassConfig pass_config;
};

struct LoweredKernel {
  jit::CudaSource source;
  jit::CompileOptions options;
  double passes_ms = 0;   // wall time of the scheduler passes
  double codegen_ms = 0;  // and of the CUDA codegen
  // Once the kernel's cubin is in `disk`: writes the program index's record
  // there (src/runtime/program_index.h), so that an application's compile()
  // finds the kernel without lowering. Unset: no record (a custom lowering).
  std::function<void(const jit::CachedCubin& cubin, jit::DiskCache& disk)>
      index;
};

using LowerFn = std::function<absl::StatusOr<LoweredKernel>(
    const Program& program, const LowerOptions& options)>;

// tessel's scheduler passes and CUDA codegen, giving exactly the source and
// NVRTC options tessel::compile() hands to the kernel cache for the same
// program and options (a test keeps the two in step).
absl::StatusOr<LoweredKernel> LowerWithCodegen(const Program& program,
                                               const LowerOptions& options);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_LOWERING_H_
