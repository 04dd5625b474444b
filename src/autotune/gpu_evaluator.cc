#include "src/autotune/gpu_evaluator.h"

#include "absl/strings/str_cat.h"
#include "jit/context.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "src/autotune/tuner.h"

namespace tessel::autotuner {

absl::StatusOr<DeviceIdentity> CurrentDevice(const CompileOptions& compile) {
  absl::StatusOr<const jit::DriverApi*> cu = jit::Driver();
  if (!cu.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "autotune needs a GPU to time candidates: ", cu.status().message()));
  }
  // The device the candidates will run on: the caller's current context's.
  absl::StatusOr<CUcontext> context = jit::ResolveContext(nullptr);
  if (!context.ok()) {
    return absl::UnavailableError(
        absl::StrCat("autotune needs a GPU to time candidates: ",
                     context.status().message()));
  }
  if (!compile.target.status().ok()) return compile.target.status();
  if (compile.target.kind() != Target::Kind::kCuda) {
    return absl::InvalidArgumentError(
        "autotune: the compile target must be a CUDA arch (candidates are "
        "timed on the GPU)");
  }
  absl::StatusOr<CUdevice> device = jit::ContextDevice(**cu, *context);
  if (!device.ok()) return device.status();
  char name[256] = {};
  if (absl::Status s = TESSEL_CU_CALL(
          **cu, cuDeviceGetName(name, sizeof(name) - 1, *device));
      !s.ok()) {
    return s;
  }
  return DeviceIdentity{.name = name, .arch = compile.target.arch()};
}

absl::StatusOr<Program> GpuEvaluator::Build(const TuneConfig& config) {
  return request_.factory(config);
}

absl::StatusOr<CompiledKernel> GpuEvaluator::Compile(const TuneConfig& config,
                                                     const Program& program) {
  CompileOptions compile = options_.compile;
  if (request_.adjust_compile) request_.adjust_compile(config, compile);
  return tessel::compile(program, compile);
}

absl::Status GpuEvaluator::Check(const TuneConfig& config,
                                 const CompiledKernel& kernel) {
  if (request_.check) return request_.check(kernel);
  // No check: the kernel must at least launch and finish.
  if (absl::Status s = kernel.launch(request_.args); !s.ok()) return s;
  return jit::SynchronizeStream(nullptr);
}

absl::StatusOr<double> GpuEvaluator::Time(const TuneConfig& config,
                                          const CompiledKernel& kernel) {
  absl::StatusOr<BenchResult> r = do_bench(
      [&](CUstream_st* stream) { return kernel.launch(request_.args, stream); },
      options_.bench);
  if (!r.ok()) return r.status();
  return r->ms;
}

}  // namespace tessel::autotuner

namespace tessel {

absl::StatusOr<TuneResult> autotune(const TuneRequest& request,
                                    const TuneOptions& options) {
  if (!request.factory) {
    return absl::InvalidArgumentError(
        "autotune: TuneRequest::factory is empty");
  }
  absl::StatusOr<autotuner::DeviceIdentity> device =
      autotuner::CurrentDevice(options.compile);
  if (!device.ok()) return device.status();
  autotuner::GpuEvaluator evaluator(request, options);
  return autotuner::AutotuneWith(request, options, *device, evaluator);
}

}  // namespace tessel
