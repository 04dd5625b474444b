#include "tools/lowering.h"

#include "absl/strings/str_cat.h"
#include "src/codegen/cuda_codegen.h"
#include "src/passes/pipeline.h"
#include "tessel/compile.h"

namespace tessel::tools {

// Mirrors tessel::compile() (src/runtime/compile.cc) up to the kernel cache;
// WarmupProcessTest.FreshProcessAfterWarmupMakesNoNvrtcCalls
// (tests/tools/process_test.cc) fails when the two drift apart.
absl::StatusOr<LoweredKernel> LowerWithCodegen(const Program& program,
                                               const LowerOptions& options) {
  const Target target = Target::cuda(options.arch);
  if (!target.status().ok()) return target.status();
  if (target.sm() < 80) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.arch, " is below sm_80, the oldest arch the ",
                     "CUDA path supports"));
  }
  passes::LoweringState state;
  state.program = program.ir();
  state.target = target;
  state.config = PassConfig{};
  if (absl::Status s = passes::RunPipeline(state); !s.ok()) return s;
  absl::StatusOr<codegen::GeneratedKernel> generated = codegen::EmitCuda(state);
  if (!generated.ok()) return generated.status();
  LoweredKernel lowered;
  lowered.source = std::move(generated->source);
  lowered.source.text = absl::StrCat(
      "// pass config: ", state.config.ToString(), "\n", lowered.source.text);
  lowered.options.arch = target.arch();
  lowered.options.fast_math = options.fast_math;
  lowered.options.lineinfo = options.lineinfo;
  return lowered;
}

}  // namespace tessel::tools
