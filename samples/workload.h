// A sample's unit of work: named host tensors, the tile programs that run on
// them in order (a host wrapper's kernels), the outputs to check and the
// float64 reference they are checked against. One Workload runs unchanged on
// the GPU (compiled through the kernel cache) or on the CPU interpreter.
//
//   tessel::samples::Workload w;
//   w.kernel = "gemm";
//   w.shape = "M=256 N=256 K=128";
//   w.tensors["A"] = ...;  w.tensors["B"] = ...;  w.tensors["C"] = ...;
//   w.steps.push_back({.program = gemm, .args = {"A", "B", "C"}});
//   w.outputs = {"C"};
//   w.flops = 2.0 * M * N * K;
//   w.reference = [](const Workload& w) { ... return expected; };
//   absl::StatusOr<RunResult> r = Execute(w, {.backend = Backend::kCpu});
//   CheckResult c = CheckOutputs(w);
#ifndef TESSEL_SAMPLES_WORKLOAD_H_
#define TESSEL_SAMPLES_WORKLOAD_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/program.h"

namespace tessel::samples {

// One tensor argument of a step: a tensor of the workload, optionally seen
// with another shape of the same element count (a flat view for the
// element-wise helper kernels).
struct Arg {
  Arg(const char* name) : name(name) {}             // NOLINT
  Arg(std::string name) : name(std::move(name)) {}  // NOLINT
  Arg(std::string name, std::vector<int64_t> view)
      : name(std::move(name)), view(std::move(view)) {}
  std::string name;
  std::vector<int64_t> view;  // empty: the tensor's own shape
};

// One kernel launch of the workload.
struct Step {
  Program program;
  std::vector<Arg> args;  // one per program parameter, in order
  PassConfig pass_config;
};

// What one output must match: |actual - reference| <= atol + rtol * |ref|.
struct Expected {
  std::string tensor;
  HostTensor reference;  // f64, the output's shape
  double rtol = 1e-2;
  double atol = 1e-2;
};

// An output whose f16-rounded intermediates (tiles rounded before a second
// gemm) make its error scale with its magnitude: rtol 1e-2, atol 5e-3 x
// max(1, max |reference|). Defined in sample_util.cc.
Expected ExpectedNear(std::string tensor, HostTensor reference);

// How bench/device.py files a measurement (docs/benchmarks.md): records
// with equal kernel, pass, variant, dtype and size are compared across
// impls.
struct BenchLabel {
  std::string kernel;           // family: "gemm", "flash_attention", ...
  std::string impl = "tessel";  // a colon marks a detail: "tessel:mbarrier"
  std::string pass = "fwd";     // "fwd", "bwd", "fwd+bwd"
  std::string variant;          // "NN", "causal", ...
  std::string dtype;            // the input element type
  std::vector<std::pair<std::string, int64_t>> shape;
  std::string size;  // "4096^3", "B8 S4096 H16 D128"
  double flops = 0;  // useful FLOPs of one call, as the peers count them
};

struct Workload {
  std::string kernel;  // "gemm", "linear_attention_bwd", ...
  std::string shape;   // human-readable: "M=256 N=256 K=128 f16 NN"
  std::map<std::string, HostTensor> tensors;
  std::vector<Step> steps;
  // The step that is the sample's kernel (the others are the host wrapper's
  // zeroing / conversion helpers): its cache origin is the one reported, and
  // the GPU bench also times it alone.
  int main_step = 0;
  std::vector<std::string> outputs;  // tensors the GPU run copies back
  // Work of one run, for TFLOP/s (flops > 0) or GB/s (otherwise).
  double flops = 0;
  double bytes = 0;
  BenchLabel label;
  // The float64 reference of the outputs, from the input tensors.
  std::function<absl::StatusOr<std::vector<Expected>>(const Workload&)>
      reference;
};

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_WORKLOAD_H_
