#include "tools/lowering.h"

#include <memory>

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
  LoweredKernel out{lowered->generated.source, lowered->jit_options,
                    lowered->passes_ms, lowered->codegen_ms};
  auto kept = std::make_shared<const runtime::Lowered>(*std::move(lowered));
  out.index = [program, compile_options, kept](const jit::CachedCubin& cubin,
                                               jit::DiskCache& disk) {
    runtime::IndexLowered(program.ir(), compile_options, *kept, cubin, disk);
  };
  return out;
}

}  // namespace tessel::tools
