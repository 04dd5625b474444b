// Autotuning a sample's kernel on the GPU: the pieces `gemm --tune` and
// `flash_attention --tune` share.
//
//   // w: a one-step workload; candidates replace its program.
//   absl::StatusOr<tessel::TuneResult> r = tessel::samples::TuneWorkload(
//       w, "gemm_NN", space,
//       [&](const tessel::TuneConfig& t) { return GemmProgram(...); },
//       options);
//
// Each candidate is launched on one device copy of the workload's tensors,
// its outputs poisoned with NaN first, and checked against the workload's
// float64 reference (computed once, at the first check) before it is timed.
#ifndef TESSEL_SAMPLES_TUNE_WORKLOAD_H_
#define TESSEL_SAMPLES_TUNE_WORKLOAD_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/sample_main.h"
#include "samples/workload.h"
#include "tessel/autotune.h"

namespace tessel::samples {

// Tunes the program of `w`'s single step over `space` on device 0;
// `adjust_compile` is TuneRequest::adjust_compile (a config's pass config).
// InvalidArgument for a workload of several steps (a host wrapper: tune its
// kernels one by one); Unavailable without a GPU.
absl::StatusOr<TuneResult> TuneWorkload(
    const Workload& w, const std::string& kernel, const TuneSpace& space,
    const ProgramFactory& factory, const TuneOptions& options,
    std::function<void(const TuneConfig&, CompileOptions&)> adjust_compile =
        nullptr);

// The axis `name`: the value `pinned` gives it, else `values`.
TuneSpace::Axis PinnedAxis(const char* name, std::vector<TuneValue> values,
                           const TuneConfig& pinned);

// A command-line flag that fixes a tuned parameter ("block-m" -> "block_m").
struct PinnableFlag {
  const char* flag;
  const char* parameter;
};
// The parameters whose flags the user gave, with their values in `current`.
TuneConfig PinnedByFlags(const Flags& flags, const TuneConfig& current,
                         const std::vector<PinnableFlag>& pinnable);

// --tune-budget=S and --retune, progress to stdout. InvalidArgument when
// they come without --tune, or --tune without --backend=gpu.
absl::StatusOr<TuneOptions> TuneOptionsFromFlags(const SampleArgs& args,
                                                 const Flags& flags);

// "winner: block_m=128 ..., 0.31 ms (stored, <path>)".
void PrintWinner(const TuneResult& result);

// The usage lines of --tune, --tune-budget and --retune.
extern const char kTuneUsage[];

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_TUNE_WORKLOAD_H_
