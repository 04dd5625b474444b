#include "samples/execute.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "samples/status_macros.h"
#include "tessel/device.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<HostTensor*> Find(Workload& w, const std::string& name) {
  auto it = w.tensors.find(name);
  if (it == w.tensors.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.kernel, ": no tensor named ", name));
  }
  return &it->second;
}

// The cache column of the report, from where compile() found the kernel.
std::string Origin(const CompiledKernel& kernel) {
  const std::string origin = kernel.cache_origin();
  if (origin == "compiled") return "miss";
  if (origin == "none") return "uncached";
  return absl::StrCat("hit (", origin, ")");
}

absl::StatusOr<std::vector<CompiledKernel>> CompileAll(const Workload& w,
                                                       const Target& target,
                                                       std::string* cache,
                                                       double* compile_ms) {
  std::vector<CompiledKernel> kernels;
  std::vector<std::string> origins;
  Clock::time_point start = Clock::now();
  for (const Step& step : w.steps) {
    absl::StatusOr<CompiledKernel> k = compile(
        step.program.ir(), {.target = target, .pass_config = step.pass_config});
    if (!k.ok()) {
      return absl::Status(
          k.status().code(),
          absl::StrCat(w.kernel, ": compiling ", step.program.name(), " for ",
                       target.ToString(), ": ", k.status().message()));
    }
    origins.push_back(Origin(*k));
    kernels.push_back(*std::move(k));
  }
  if (compile_ms != nullptr) *compile_ms = MsSince(start);
  if (cache != nullptr) {
    *cache = origins.at(std::clamp<size_t>(w.main_step, 0, origins.size() - 1));
  }
  return kernels;
}

// The TensorViews each step launches on: every tensor's memory (a device
// pointer, or the host bytes for Target::cpu()) with the step's shapes.
absl::StatusOr<std::vector<std::vector<TensorView>>> StepViews(
    Workload& w, const std::function<uint64_t(const std::string&)>& address) {
  std::vector<std::vector<TensorView>> views;
  for (const Step& step : w.steps) {
    std::vector<TensorView> v;
    for (const Arg& arg : step.args) {
      SAMPLES_ASSIGN_OR_RETURN(HostTensor * t, Find(w, arg.name));
      std::vector<int64_t> shape = arg.view.empty() ? t->shape() : arg.view;
      if (Product(shape) != t->num_elements()) {
        return absl::InvalidArgumentError(
            absl::StrCat(w.kernel, ": view of ", arg.name, " has another ",
                         "element count than ", t->type_string()));
      }
      v.push_back(TensorView::Contiguous(address(arg.name), t->dtype(),
                                         std::move(shape)));
    }
    views.push_back(std::move(v));
  }
  return views;
}

// Launches every step in order on `stream`.
absl::Status LaunchAll(const Workload& w,
                       const std::vector<CompiledKernel>& kernels,
                       const std::vector<std::vector<TensorView>>& views,
                       CUstream_st* stream) {
  for (size_t i = 0; i < kernels.size(); ++i) {
    absl::Status s = kernels[i].launch(views[i], stream);
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat(w.kernel, ": launching ",
                                 w.steps[i].program.name(), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- CPU

absl::StatusOr<RunResult> ExecuteOnCpu(Workload& w, const ExecuteOptions& o) {
  RunResult r;
  r.backend = Backend::kCpu;
  r.device = "interpreter";
  if (!o.compile_arch.empty()) {
    SAMPLES_ASSIGN_OR_RETURN(
        r.cache, CompileSteps(w, Target::cuda(o.compile_arch), &r.compile_ms));
  }
  // The public path: compile for Target::cpu(), launch on the host tensors
  // (the steps update the workload's tensors in place).
  SAMPLES_ASSIGN_OR_RETURN(
      std::vector<CompiledKernel> kernels,
      CompileAll(w, Target::cpu(), /*cache=*/nullptr, /*compile_ms=*/nullptr));
  SAMPLES_ASSIGN_OR_RETURN(
      std::vector<std::vector<TensorView>> views,
      StepViews(w, [&](const std::string& name) {
        return static_cast<uint64_t>(
            reinterpret_cast<uintptr_t>(w.tensors.at(name).data()));
      }));
  Clock::time_point start = Clock::now();
  SAMPLES_RETURN_IF_ERROR(LaunchAll(w, kernels, views, nullptr));
  r.ms = MsSince(start);
  return r;
}

// ---------------------------------------------------------------- GPU

absl::StatusOr<std::string> DeviceName() {
  SAMPLES_ASSIGN_OR_RETURN(DeviceInfo info, GetDeviceInfo());
  return info.name;
}

absl::StatusOr<RunResult> ExecuteOnGpu(Workload& w, const ExecuteOptions& o) {
  if (std::string why = GpuUnavailableReason(); !why.empty()) {
    return absl::UnavailableError(
        absl::StrCat("--backend=gpu needs a GPU: ", why));
  }
  RunResult r;
  r.backend = Backend::kGpu;
  SAMPLES_ASSIGN_OR_RETURN(r.device, DeviceName());
  Target target = Target::detect();
  SAMPLES_ASSIGN_OR_RETURN(std::vector<CompiledKernel> kernels,
                           CompileAll(w, target, &r.cache, &r.compile_ms));

  std::map<std::string, DeviceMemory> buffers;
  for (auto& [name, t] : w.tensors) {
    SAMPLES_ASSIGN_OR_RETURN(
        DeviceMemory b,
        DeviceMemory::Allocate(std::max<size_t>(t.num_bytes(), 1)));
    SAMPLES_RETURN_IF_ERROR(b.CopyFromHost(t.data(), t.num_bytes()));
    buffers.emplace(name, std::move(b));
  }
  SAMPLES_ASSIGN_OR_RETURN(
      std::vector<std::vector<TensorView>> views,
      StepViews(w, [&](const std::string& name) {
        return static_cast<uint64_t>(buffers.at(name).ptr());
      }));
  auto run_all = [&](CUstream_st* stream) {
    return LaunchAll(w, kernels, views, stream);
  };

  // The checked run (also loads the modules).
  SAMPLES_RETURN_IF_ERROR(run_all(nullptr));
  SAMPLES_RETURN_IF_ERROR(Synchronize());
  for (const std::string& name : w.outputs) {
    SAMPLES_ASSIGN_OR_RETURN(HostTensor * t, Find(w, name));
    SAMPLES_RETURN_IF_ERROR(
        buffers.at(name).CopyToHost(t->data(), t->num_bytes()));
  }
  if (o.bench) {
    SAMPLES_ASSIGN_OR_RETURN(BenchResult b, do_bench(run_all, o.bench_options));
    r.ms = b.ms;
    r.benched = true;
    r.bench = b;
    r.cuda_graph = o.bench_options.use_cuda_graph;
    if (kernels.size() > 1) {
      // The kernel alone (atomics keep adding into their outputs: the
      // values drift, the time does not).
      const size_t m = std::min<size_t>(w.main_step, kernels.size() - 1);
      SAMPLES_ASSIGN_OR_RETURN(BenchResult k, do_bench(
                                                  [&](CUstream_st* stream) {
                                                    return kernels[m].launch(
                                                        views[m], stream);
                                                  },
                                                  o.bench_options));
      r.kernel_ms = k.ms;
    } else {
      r.kernel_ms = b.ms;
    }
  } else {
    Clock::time_point start = Clock::now();
    SAMPLES_RETURN_IF_ERROR(run_all(nullptr));
    SAMPLES_RETURN_IF_ERROR(Synchronize());
    r.ms = MsSince(start);
  }
  return r;
}

double MaxAbsError(const HostTensor& a, const HostTensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double d = std::fabs(a.get_flat(i) - b.get_flat(i));
    if (std::isnan(d)) return d;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace

const char* BackendName(Backend backend) {
  return backend == Backend::kGpu ? "gpu" : "cpu";
}

Backend DefaultBackend() {
  return GpuUnavailableReason().empty() ? Backend::kGpu : Backend::kCpu;
}

absl::StatusOr<std::string> CompileSteps(const Workload& workload,
                                         const Target& target,
                                         double* compile_ms) {
  std::string cache;
  SAMPLES_ASSIGN_OR_RETURN(std::vector<CompiledKernel> kernels,
                           CompileAll(workload, target, &cache, compile_ms));
  return cache;
}

absl::StatusOr<RunResult> Execute(Workload& workload,
                                  const ExecuteOptions& options) {
  if (workload.steps.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(workload.kernel, ": the workload has no steps"));
  }
  return options.backend == Backend::kGpu ? ExecuteOnGpu(workload, options)
                                          : ExecuteOnCpu(workload, options);
}

absl::StatusOr<CheckResult> CheckOutputs(const Workload& workload) {
  if (!workload.reference) {
    return absl::FailedPreconditionError(
        absl::StrCat(workload.kernel, ": no reference to check against"));
  }
  SAMPLES_ASSIGN_OR_RETURN(std::vector<Expected> expected,
                           workload.reference(workload));
  CheckResult result;
  result.ok = true;
  for (const Expected& e : expected) {
    auto it = workload.tensors.find(e.tensor);
    if (it == workload.tensors.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          workload.kernel, ": the reference names no tensor ", e.tensor));
    }
    const HostTensor& actual = it->second;
    ::testing::AssertionResult close =
        testing::AllClose(actual, e.reference, e.rtol, e.atol);
    if (close) {
      absl::StrAppend(&result.report, e.tensor, " ", actual.type_string(),
                      ": ok, max |err| ", MaxAbsError(actual, e.reference),
                      " (rtol ", e.rtol, ", atol ", e.atol, ")\n");
    } else {
      result.ok = false;
      absl::StrAppend(&result.report, e.tensor, " ", actual.type_string(),
                      ": MISMATCH\n", close.message(), "\n");
    }
  }
  return result;
}

}  // namespace tessel::samples
