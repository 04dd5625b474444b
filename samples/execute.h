// Running a sample Workload on the GPU or on the CPU interpreter, timing it,
// and checking its outputs against the float64 reference.
//
//   tessel::samples::Workload w = ...;               // workload.h
//   absl::StatusOr<RunResult> r = Execute(w, {.backend = DefaultBackend(),
//                                             .bench = true});
//   absl::StatusOr<CheckResult> c = CheckOutputs(w);
//   if (c.ok() && !c->ok) std::cerr << c->report;
//
// GPU: every step is compiled for the device (tessel::compile, through the
// kernel cache), all tensors are uploaded, the steps run once in order and the
// outputs come back; with bench, tessel::do_bench then times the whole step
// list (each run re-zeroes what it accumulates into, as the steps say).
// CPU: every step is compiled for Target::cpu() and launched on the host
// tensors in place (the interpreter), timed by the wall clock; with
// compile_arch set, each step is also compiled for that arch (no GPU needed),
// so the cache hit / miss is real there too.
#ifndef TESSEL_SAMPLES_EXECUTE_H_
#define TESSEL_SAMPLES_EXECUTE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/device.h"
#include "tessel/profiler.h"

namespace tessel::samples {

enum class Backend { kGpu, kCpu };

const char* BackendName(Backend backend);  // "gpu" / "cpu"
// GpuUnavailableReason() (include/tessel/device.h) says why there is none.
// The GPU when there is one, else the CPU interpreter.
Backend DefaultBackend();

struct ExecuteOptions {
  Backend backend = Backend::kCpu;
  // CPU only: also compile every step for this arch ("sm_90a") through the
  // kernel cache; empty: do not compile.
  std::string compile_arch;
  // GPU: time with do_bench (else one wall-clock timed run after the
  // first). CPU: the interpreter run is always timed once.
  bool bench = false;
  BenchOptions bench_options;
};

struct RunResult {
  Backend backend = Backend::kCpu;
  std::string device;  // "NVIDIA H200" / "interpreter"
  // Where the main step's kernel came from: "miss" (compiled by NVRTC),
  // "hit (disk)", "hit (memory)", or "-" when nothing was compiled.
  std::string cache = "-";
  double compile_ms = 0;
  double ms = 0;         // one run of all steps (the host wrapper)
  double kernel_ms = 0;  // the main step alone (GPU bench), else 0
  bool benched = false;  // ms is do_bench's median
  // The whole step list's do_bench result (GPU bench only).
  std::optional<BenchResult> bench;
  // bench replayed CUDA graphs of back-to-back calls (no launch cost).
  bool cuda_graph = false;
};

absl::StatusOr<RunResult> Execute(Workload& workload,
                                  const ExecuteOptions& options);

// Compiles every step of `workload` for `target` (through the cache).
// Returns the main step's cache origin as RunResult::cache spells it.
absl::StatusOr<std::string> CompileSteps(const Workload& workload,
                                         const Target& target,
                                         double* compile_ms = nullptr);

struct CheckResult {
  bool ok = false;
  // One line per output ("C f16[256, 256]: ok, max |err| 0.0012"), and for
  // a mismatch the count and the worst elements by index.
  std::string report;
};

// Compares each output with workload.reference(workload).
absl::StatusOr<CheckResult> CheckOutputs(const Workload& workload);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_EXECUTE_H_
