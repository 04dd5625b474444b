// An NVRTC compile with NVRTC's own per-phase times (its --time=FILE report),
// for bench/jit_bench's per-kernel breakdown.
//
//   ASSIGN_OR_RETURN(tessel::bench::PhasedCubin c,
//                    tessel::bench::CompileWithPhases(source, {.arch =
//                    "sm_90a"}));
//   c.frontend_ms;  // CUDA C++ front end: the prelude, headers and kernel
//   parsed c.nvvm_ms;      // NVVM: LLVM optimizer and PTX generation
//   c.ptxas_ms;     // PTX to SASS ("PTX Translation" in NVRTC's report)
//
// --time writes a report and changes nothing in the cubin (checked byte for
// byte with CUDA 13.0's NVRTC).
#ifndef TESSEL_BENCH_NVRTC_PHASES_H_
#define TESSEL_BENCH_NVRTC_PHASES_H_

#include "absl/status/statusor.h"
#include "jit/nvrtc.h"

namespace tessel::bench {

struct PhasedCubin {
  jit::Cubin cubin;
  double frontend_ms = 0;
  double nvvm_ms = 0;
  double ptxas_ms = 0;
};

absl::StatusOr<PhasedCubin> CompileWithPhases(const jit::CudaSource& source,
                                              jit::CompileOptions options);

}  // namespace tessel::bench

#endif  // TESSEL_BENCH_NVRTC_PHASES_H_
