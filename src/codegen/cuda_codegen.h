// CUDA C++ emission from lowered IR: a mechanical printer. Every decision
// (threads, layouts, instructions, barriers, shared offsets) was made by the
// passes; this file only spells it.
//
//   ASSIGN_OR_RETURN(codegen::GeneratedKernel k, codegen::EmitCuda(state));
//   k.source.text;        // readable, indented CUDA C++
//   k.signature;          // pointers for the params, then i32 per dim
//
// The source includes "tessel_prelude.cuh" (handed over by content) and
// defines one extern "C" __global__ function named after the program.
#ifndef TESSEL_SRC_CODEGEN_CUDA_CODEGEN_H_
#define TESSEL_SRC_CODEGEN_CUDA_CODEGEN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/launch.h"
#include "jit/nvrtc.h"
#include "src/passes/lowering_state.h"

namespace tessel::codegen {

struct GeneratedKernel {
  jit::CudaSource source;
  jit::KernelSignature signature;
  int threads = 0;
  int64_t dynamic_smem_bytes = 0;
};

absl::StatusOr<GeneratedKernel> EmitCuda(const passes::LoweringState& state);

// A kernel's signature (pointers for the params, i32 per dim, 128 bytes per
// tensor map), threads and dynamic shared memory: the same whichever
// emitter spelled it.
void SetLaunchShape(const passes::LoweringState& state, GeneratedKernel* k);

// The C++ type generated code uses for a dtype ("tl::f16", "float", ...).
const char* CudaType(DataType t);

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_CUDA_CODEGEN_H_
