#include "tools/lowering.h"

#include "src/runtime/lower.h"
#include "tessel/compile.h"

namespace tessel::tools {

absl::StatusOr<LoweredKernel> LowerWithCodegen(const Program& program,
                                               const LowerOptions& options) {
  CompileOptions compile_options;
  compile_options.target = Target::cuda(options.arch);
  compile_options.fast_math = options.fast_math;
  compile_options.lineinfo = options.lineinfo;
  compile_options.pass_config = options.pass_config;
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(program.ir(), compile_options);
  if (!lowered.ok()) return lowered.status();
  return LoweredKernel{std::move(lowered->generated.source),
                       std::move(lowered->jit_options), lowered->passes_ms,
                       lowered->codegen_ms};
}

}  // namespace tessel::tools
