// CUDA sources compiled through a PTX translation of themselves
// (CudaSource::to_ptx: tessel's PTX emitter, src/codegen/ptx/), which skips
// NVRTC's C++ front end and NVVM. The key stays the CUDA source's, with the
// translator's identity and ptxas's version appended (cache_key.h), so a
// cache hit costs the CUDA text alone: the translation runs on a miss.
//
//   source.to_ptx = [state] { return EmitPtxText(*state); };
//   source.ptx_translator = "tessel-ptx 1a2b3c...";
//   ASSIGN_OR_RETURN(CompileInput in, ChooseCompileInput(source, options));
//   ASSIGN_OR_RETURN(Cubin cubin, Compile(in.source, in.options));
//   // The kernel cache compiles `in` through CompileFitted instead
//   // (occupancy_fit.h): a PTX module's registers are fitted too.
#ifndef TESSEL_JIT_PTX_TRANSLATION_H_
#define TESSEL_JIT_PTX_TRANSLATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

// What a miss compiles.
struct CompileInput {
  CudaSource source;
  CompileOptions options;
  // Why the CUDA text is compiled although a translation was offered (its
  // Unimplemented message); empty when the PTX is, or none was offered.
  std::string ptx_fallback;
  double translate_ms = 0;  // wall time of to_ptx
  // The PTX module's (PtxModule::launch, PtxModule::more_registers).
  LaunchShape launch;
  std::function<absl::StatusOr<PtxModule>()> more_registers;
};

// The PTX module (kPtx, its own entry name) with ptxas's options (arch and
// lineinfo: the NVRTC flags shape CUDA C++, not PTX) when `source` offers a
// translation that gives one; else `source` and `options` as they are. A
// translation error other than Unimplemented is returned (a translator bug).
absl::StatusOr<CompileInput> ChooseCompileInput(const CudaSource& source,
                                                const CompileOptions& options);

// `source` and `options` without the translation, and why: what a miss
// compiles when the translation is declined, or when ptxas refuses it (a
// ptxas older than the NVRTC in use must not fail a kernel NVRTC compiles;
// the kernel cache then keeps `why` in the cubin's log).
CompileInput Untranslated(const CudaSource& source,
                          const CompileOptions& options, std::string why);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_PTX_TRANSLATION_H_
