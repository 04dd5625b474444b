#include "tools/lowering.h"

#include "src/runtime/lower.h"
#include "tessel/compile.h"

namespace tessel::tools {

absl::StatusOr<LoweredKernel> LowerWithCodegen(const Program& program,
                                               const LowerOptions& options) {
  // Designated: a default target would be Target::detect(), which starts
  // the CUDA driver in a process that only compiles.
  const CompileOptions compile_options{.target = Target::cuda(options.arch),
                                       .pass_config = options.pass_config,
                                       .fast_math = options.fast_math,
                                       .lineinfo = options.lineinfo};
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(program.ir(), compile_options);
  if (!lowered.ok()) return lowered.status();
  return LoweredKernel{std::move(lowered->generated.source),
                       std::move(lowered->jit_options), lowered->passes_ms,
                       lowered->codegen_ms};
}

}  // namespace tessel::tools
