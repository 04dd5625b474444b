// PTX emission from lowered IR: the same kernel the CUDA printer spells,
// for ptxas directly (no NVRTC front end, no NVVM).
//
//   absl::StatusOr<codegen::GeneratedKernel> k = codegen::EmitPtx(state);
//   if (absl::IsUnimplemented(k.status())) k = codegen::EmitCuda(state);
//
// Unimplemented names the first construct the emitter does not spell yet
// (f16 arithmetic, libdevice math, 8-bit types, clusters, ...); the caller
// then prints CUDA C++ instead.
#ifndef TESSEL_SRC_CODEGEN_PTX_PTX_CODEGEN_H_
#define TESSEL_SRC_CODEGEN_PTX_PTX_CODEGEN_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "src/codegen/cuda_codegen.h"
#include "src/passes/lowering_state.h"

namespace tessel::codegen {

struct PtxEmitOptions {
  // Values a loop body computes from values outside the loop are computed
  // once, before it, as NVVM's LICM does (linear attention's swizzled
  // shared-memory addresses: 165 instructions less per k step). Off, they
  // are recomputed in every iteration: fewer registers. The kernel cache
  // compiles a kernel with it off, then on where registers are to spare
  // (jit/occupancy_fit.h).
  bool hoist_out_of_loops = true;
};

absl::StatusOr<GeneratedKernel> EmitPtx(const passes::LoweringState& state,
                                        PtxEmitOptions options = {});

// The same, spelling the prelude's instructions from `prelude` instead of
// the embedded prelude's (tests plant a changed spelling there).
class PreludeAsm;
absl::StatusOr<GeneratedKernel> EmitPtx(const passes::LoweringState& state,
                                        PtxEmitOptions options,
                                        const PreludeAsm& prelude);

// "tessel-ptx <hash of src/codegen/ptx/*, the prelude and prelude_asm.*>"
// (the instructions it spells come from the prelude): what keys the cache
// entries of kernels compiled through the emitter
// (jit::CudaSource::ptx_translator).
std::string_view PtxEmitterId();

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_PTX_PTX_CODEGEN_H_
