// The CandidateEvaluator autotune() uses on the GPU: the request's factory,
// tessel::compile, the request's check and do_bench on the request's args.
//
//   ASSIGN_OR_RETURN(DeviceIdentity device, CurrentDevice(options.compile));
//   GpuEvaluator eval(request, options);
//   return AutotuneWith(request, options, device, eval);
#ifndef TESSEL_SRC_AUTOTUNE_GPU_EVALUATOR_H_
#define TESSEL_SRC_AUTOTUNE_GPU_EVALUATOR_H_

#include "absl/status/statusor.h"
#include "src/autotune/search.h"
#include "src/autotune/tune_key.h"
#include "tessel/autotune.h"

namespace tessel::autotuner {

// Device 0's name and the arch candidates are compiled for. Unavailable
// without a driver or device; the target's own error when it has one.
absl::StatusOr<DeviceIdentity> CurrentDevice(const CompileOptions& compile);

class GpuEvaluator : public CandidateEvaluator {
 public:
  // Both must outlive the evaluator.
  GpuEvaluator(const TuneRequest& request, const TuneOptions& options)
      : request_(request), options_(options) {}

  absl::StatusOr<Program> Build(const TuneConfig& config) override;
  absl::StatusOr<CompiledKernel> Compile(const TuneConfig& config,
                                         const Program& program) override;
  absl::Status Check(const TuneConfig& config,
                     const CompiledKernel& kernel) override;
  absl::StatusOr<double> Time(const TuneConfig& config,
                              const CompiledKernel& kernel) override;

 private:
  const TuneRequest& request_;
  const TuneOptions& options_;
};

}  // namespace tessel::autotuner

#endif  // TESSEL_SRC_AUTOTUNE_GPU_EVALUATOR_H_
