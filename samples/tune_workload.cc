#include "samples/tune_workload.h"

#include <iostream>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "samples/status_macros.h"
#include "tessel/device.h"
#include "tessel/testing.h"

namespace tessel::samples {

const char kTuneUsage[] =
    "  --tune               autotune the tile on the GPU (default size:\n"
    "                       bench), print each candidate, bench the winner;\n"
    "                       given tile flags stay fixed; the winner is\n"
    "                       stored and reused (docs/autotune.md)\n"
    "  --tune-budget=S      stop starting candidates after S seconds\n"
    "  --retune             tune even when a winner is stored\n";

absl::StatusOr<TuneResult> TuneWorkload(
    const Workload& w, const std::string& kernel, const TuneSpace& space,
    const ProgramFactory& factory, const TuneOptions& options,
    std::function<void(const TuneConfig&, CompileOptions&)> adjust_compile) {
  if (w.steps.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("tuning ", w.kernel, ": the workload has ", w.steps.size(),
                     " steps; only a single-kernel workload can be tuned"));
  }
  if (std::string why = GpuUnavailableReason(); !why.empty()) {
    return absl::UnavailableError(
        absl::StrCat("--tune times candidates on a GPU: ", why));
  }
  // One device copy of every tensor the step reads or writes.
  std::map<std::string, HostTensor> host = w.tensors;
  std::map<std::string, DeviceMemory> device;
  std::vector<TensorView> args;
  for (const Arg& arg : w.steps[0].args) {
    const HostTensor& t = host.at(arg.name);
    if (!device.contains(arg.name)) {
      SAMPLES_ASSIGN_OR_RETURN(DeviceMemory buffer,
                               DeviceMemory::Allocate(t.num_bytes()));
      SAMPLES_RETURN_IF_ERROR(buffer.CopyFromHost(t.data(), t.num_bytes()));
      device.emplace(arg.name, std::move(buffer));
    }
    args.push_back(
        TensorView::Contiguous(device.at(arg.name).ptr(), t.dtype(),
                               arg.view.empty() ? t.shape() : arg.view));
  }
  for (const std::string& out : w.outputs) {
    if (!device.contains(out)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuning ", w.kernel, ": output ", out, " is not a step argument"));
    }
  }

  std::optional<std::vector<Expected>> reference;
  TuneRequest request;
  request.kernel = kernel;
  request.space = space;
  request.factory = factory;
  request.adjust_compile = std::move(adjust_compile);
  request.args = args;
  request.check = [&](const CompiledKernel& candidate) -> absl::Status {
    if (!reference.has_value()) {
      SAMPLES_ASSIGN_OR_RETURN(reference, w.reference(w));
    }
    // NaN everywhere first: a kernel that skips a tile cannot pass on the
    // previous candidate's output.
    for (const std::string& out : w.outputs) {
      SAMPLES_RETURN_IF_ERROR(device.at(out).Fill(0xFF));
    }
    SAMPLES_RETURN_IF_ERROR(candidate.launch(args));
    SAMPLES_RETURN_IF_ERROR(Synchronize());
    for (const Expected& e : *reference) {
      HostTensor& actual = host.at(e.tensor);
      SAMPLES_RETURN_IF_ERROR(
          device.at(e.tensor).CopyToHost(actual.data(), actual.num_bytes()));
      ::testing::AssertionResult close =
          testing::AllClose(actual, e.reference, e.rtol, e.atol,
                            /*worst_reported=*/2);
      if (!close) {
        return absl::InternalError(absl::StrCat(
            e.tensor,
            " does not match the float64 reference: ", close.message()));
      }
    }
    return absl::OkStatus();
  };
  return autotune(request, options);
}

TuneSpace::Axis PinnedAxis(const char* name, std::vector<TuneValue> values,
                           const TuneConfig& pinned) {
  if (const TuneValue* v = pinned.Find(name)) return {name, {*v}};
  return {name, std::move(values)};
}

TuneConfig PinnedByFlags(const Flags& flags, const TuneConfig& current,
                         const std::vector<PinnableFlag>& pinnable) {
  TuneConfig pinned;
  for (const PinnableFlag& p : pinnable) {
    const TuneValue* value = current.Find(p.parameter);
    if (flags.Has(p.flag) && value != nullptr) pinned.Set(p.parameter, *value);
  }
  return pinned;
}

absl::StatusOr<TuneOptions> TuneOptionsFromFlags(const SampleArgs& args,
                                                 const Flags& flags) {
  if (!args.tune) {
    if (flags.Has("retune") || flags.Has("tune-budget")) {
      return absl::InvalidArgumentError(
          "--retune and --tune-budget go with --tune");
    }
    return TuneOptions{};
  }
  if (args.backend != Backend::kGpu) {
    return absl::InvalidArgumentError(
        "--tune times candidates on the GPU: it needs --backend=gpu (and a "
        "GPU)");
  }
  TuneOptions options;
  // Candidates compile with the switches the winner will be benched with.
  SAMPLES_ASSIGN_OR_RETURN(options.compile.pass_config,
                           PassConfigFromFlags(flags));
  SAMPLES_ASSIGN_OR_RETURN(int64_t budget_s, flags.Int("tune-budget", 0));
  SAMPLES_ASSIGN_OR_RETURN(options.retune, flags.Bool("retune", false));
  if (budget_s > 0) options.budget = absl::Seconds(budget_s);
  options.progress = &std::cout;
  return options;
}

void PrintWinner(const TuneResult& r) {
  std::cout << absl::StrFormat(
      "winner: %s, %.4g ms (%s%s)\n\n", r.best.ToString(), r.best_ms,
      r.from_store ? "stored, " : "",
      r.store_path.empty() ? "not stored" : r.store_path);
}

}  // namespace tessel::samples
