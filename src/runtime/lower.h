// Everything compile() does before NVRTC: the scheduler passes and the CUDA
// codegen, giving the exact source and NVRTC options that key the cache.
// tessel-warmup uses it to ask the cache about a kernel without compiling.
// With CompileOptions::direct_ptx (and a ptxas), the source also offers its
// PTX translation (jit::CudaSource::to_ptx), which the kernel cache runs
// only on a miss.
//
//   ASSIGN_OR_RETURN(runtime::Lowered l,
//                    runtime::Lower(program.ir(), options));
//   ASSIGN_OR_RETURN(std::string key,
//                    jit::ComputeCacheKey(l.generated.source, l.jit_options));
#ifndef TESSEL_SRC_RUNTIME_LOWER_H_
#define TESSEL_SRC_RUNTIME_LOWER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "jit/nvrtc.h"
#include "src/codegen/cuda_codegen.h"
#include "src/passes/lowering_state.h"
#include "tessel/compile.h"

namespace tessel::runtime {

using StrideMap = decltype(passes::LoweringState::strides);

struct Lowered {
  passes::LoweringState state;  // the program after every pass
  codegen::GeneratedKernel generated;
  jit::CompileOptions jit_options;
  // Wall time of the scheduler passes and of the codegen (for benchmarks).
  double passes_ms = 0;
  double codegen_ms = 0;
};

// Fails for the CPU target and for archs below sm_80. `strides`: the
// parameters taken as strided views (LoweringState::strides); empty for the
// row-major kernel compile() makes.
absl::StatusOr<Lowered> Lower(const ir::Program& program,
                              const CompileOptions& options,
                              StrideMap strides = {});

struct KernelImpl;

// The kernel compile() makes of `lowered` and its cubin.
std::shared_ptr<KernelImpl> KernelFromLowered(const ir::Program& program,
                                              const CompileOptions& options,
                                              const Lowered& lowered,
                                              jit::CachedCubin cubin);

// For a kernel lowered and cached outside compile() (tessel-warmup): writes
// the program index's record (program_index.h) into `disk`, the record
// compile() would write, so that an application's compile() finds the
// kernel there without lowering. Nothing where the index does not apply.
void IndexLowered(const ir::Program& program, const CompileOptions& options,
                  const Lowered& lowered, const jit::CachedCubin& cubin,
                  jit::DiskCache& disk);

// Lower, then NVRTC through the kernel cache: a CUDA kernel ready to launch
// (compile() for a CUDA target; strided_views.h for strided variants).
absl::StatusOr<std::shared_ptr<KernelImpl>> CompileCuda(
    const ir::Program& program, const CompileOptions& options,
    StrideMap strides = {});

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_LOWER_H_
