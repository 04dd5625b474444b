// Where a cold compile of each manifest kernel spends its time: tessel's
// passes and CUDA codegen, the PTX emission where it is offered
// (ptx_emit_ms; "language": "ptx" when it spelled the kernel), then ptxas
// alone, or NVRTC's front end, NVVM and ptxas; then the PTX's second
// compiles for registers (fit_ms, fit_compiles; "fit" says what was kept:
// jit/occupancy_fit.h); no cache anywhere, one kernel at a time
// (bench/jit_bench --manifest).
//
//   ASSIGN_OR_RETURN(nlohmann::json report,
//                    tessel::bench::KernelBreakdown("samples/kernels.json",
//                                                   {"sm_90a", "sm_80"}));
//   report["kernels"][0]["nvvm_ms"];  report["summary"]["sm_90a"]["median_ms"];
#ifndef TESSEL_BENCH_KERNEL_BREAKDOWN_H_
#define TESSEL_BENCH_KERNEL_BREAKDOWN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessel::bench {

// InvalidArgument for a manifest or arch the warmup would refuse; a kernel
// that fails to lower or compile is a record with "error", not a failure.
absl::StatusOr<nlohmann::json> KernelBreakdown(
    const std::string& manifest_path, const std::vector<std::string>& archs);

}  // namespace tessel::bench

#endif  // TESSEL_BENCH_KERNEL_BREAKDOWN_H_
