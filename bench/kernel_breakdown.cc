#include "bench/kernel_breakdown.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>

#include "absl/strings/match.h"
#include "bench/median.h"
#include "bench/nvrtc_phases.h"
#include "jit/occupancy_fit.h"
#include "jit/ptx_translation.h"
#include "tessel/registry.h"
#include "tools/lowering.h"
#include "tools/manifest.h"
#include "tools/warmup_driver.h"

namespace tessel::bench {
namespace {

using nlohmann::json;

// CPU time of this process: on a shared machine, less noisy than wall time
// (NVRTC compiles in the calling thread).
// This process's CPU time and its reaped children's (ptxas runs as one).
double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  const auto ms = [](const timeval& v) {
    return v.tv_sec * 1e3 + v.tv_usec / 1e3;
  };
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6 + ms(children.ru_utime) +
         ms(children.ru_stime);
}

// The phases a summary reports, as named in the records.
constexpr const char* kPhases[] = {"passes_ms",   "codegen_ms", "ptx_emit_ms",
                                   "frontend_ms", "nvvm_ms",    "ptxas_ms",
                                   "nvrtc_ms",    "fit_ms",     "nvrtc_cpu_ms"};

json Summary(const std::vector<const json*>& records) {
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> phases;
  for (const json* r : records) {
    totals.push_back((*r)["total_ms"]);
    for (const char* phase : kPhases) phases[phase].push_back((*r)[phase]);
  }
  json summary = {
      {"kernels", records.size()},
      {"median_ms", Median(totals)},
      {"max_ms",
       totals.empty() ? 0.0 : *std::max_element(totals.begin(), totals.end())}};
  json medians;
  for (const char* phase : kPhases) medians[phase] = Median(phases[phase]);
  summary["median_phase_ms"] = medians;
  std::vector<const json*> slowest = records;
  std::sort(slowest.begin(), slowest.end(), [](const json* a, const json* b) {
    return (*a)["total_ms"].get<double>() > (*b)["total_ms"].get<double>();
  });
  slowest.resize(std::min<size_t>(slowest.size(), 5));
  summary["slowest"] = json::array();
  for (const json* r : slowest) summary["slowest"].push_back(*r);
  return summary;
}

// One job's record: its phases, or "error" where lowering or NVRTC failed.
json Measure(const tools::WarmupJob& job) {
  json record = {{"index", job.entry->index},
                 {"name", job.entry->name},
                 {"params", job.entry->params},
                 {"arch", job.arch}};
  absl::StatusOr<tools::LoweredKernel> lowered =
      tools::LowerWithCodegen(*job.program, {.arch = job.arch,
                                             .fast_math = job.entry->fast_math,
                                             .lineinfo = job.entry->lineinfo});
  if (!lowered.ok()) {
    record["error"] = lowered.status().ToString();
    return record;
  }
  record["passes_ms"] = lowered->passes_ms;
  record["codegen_ms"] = lowered->codegen_ms;
  // What a cache miss compiles: the PTX translation where it is offered and
  // spells the kernel (its emission is part of the miss), else the CUDA.
  const double cpu_start = CpuMs();
  absl::StatusOr<jit::CompileInput> input =
      jit::ChooseCompileInput(lowered->source, lowered->options);
  if (!input.ok()) {
    record["error"] = input.status().ToString();
    return record;
  }
  record["language"] = jit::SourceLanguageName(input->source.language);
  record["ptx_emit_ms"] = input->translate_ms;
  if (!input->ptx_fallback.empty())
    record["ptx_fallback"] = input->ptx_fallback;
  record["source_lines"] =
      std::count(input->source.text.begin(), input->source.text.end(), '\n');
  // A PTX module as a miss compiles it: with its spellings and the compiles
  // for registers (jit/occupancy_fit.h), fit_ms past the first compile.
  const auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t)
        .count();
  };
  jit::Cubin cubin;
  double first_ms = 0;
  std::atomic<int> compiles = 0;
  if (input->source.language == jit::SourceLanguage::kPtx) {
    const std::string first_text = input->source.text;
    absl::StatusOr<jit::Cubin> fitted =
        jit::CompileFitted(*input, [&](const jit::CompileInput& in) {
          ++compiles;
          const auto at = std::chrono::steady_clock::now();
          absl::StatusOr<jit::Cubin> c = jit::Compile(in.source, in.options);
          if (in.source.text == first_text) first_ms = since(at);
          return c;
        });
    if (!fitted.ok()) {
      record["error"] = fitted.status().ToString();
      return record;
    }
    cubin = *std::move(fitted);
    record["frontend_ms"] = 0;
    record["nvvm_ms"] = 0;
    record["ptxas_ms"] = first_ms;
    record["nvrtc_ms"] = first_ms;
    if (absl::StartsWith(cubin.log, "tessel: ")) {
      record["fit"] = cubin.log.substr(0, cubin.log.find('\n'));
    }
  } else {
    absl::StatusOr<PhasedCubin> compiled =
        CompileWithPhases(input->source, input->options);
    if (!compiled.ok()) {
      record["error"] = compiled.status().ToString();
      return record;
    }
    record["frontend_ms"] = compiled->frontend_ms;
    record["nvvm_ms"] = compiled->nvvm_ms;
    record["ptxas_ms"] = compiled->ptxas_ms;
    record["nvrtc_ms"] = compiled->cubin.compile_ms;
    first_ms = compiled->cubin.compile_ms;
    cubin = compiled->cubin;
    compiles = 1;
  }
  const double wall = since(start);
  record["fit_ms"] = std::max(0.0, wall - first_ms);
  record["fit_compiles"] = compiles - 1;
  record["nvrtc_cpu_ms"] = CpuMs() - cpu_start;
  record["cubin_bytes"] = cubin.image.size();
  record["total_ms"] =
      lowered->passes_ms + lowered->codegen_ms + input->translate_ms + wall;
  return record;
}

}  // namespace

absl::StatusOr<json> KernelBreakdown(const std::string& manifest_path,
                                     const std::vector<std::string>& archs) {
  absl::StatusOr<tools::Manifest> manifest = tools::LoadManifest(manifest_path);
  if (!manifest.ok()) return manifest.status();
  for (const std::string& arch : archs) {
    if (absl::Status s = tools::CheckSupportedArch(arch); !s.ok()) return s;
  }
  absl::StatusOr<tools::ManifestPrograms> programs =
      tools::BuildManifestPrograms(*manifest, KernelRegistry::Global(), archs);
  if (!programs.ok()) return programs.status();

  // NVRTC's first call in a process loads its builtins: paid once, apart.
  const auto start = std::chrono::steady_clock::now();
  (void)jit::Compile(
      {.text = "extern \"C\" __global__ void k() {}", .entry = "k"},
      {.arch = archs.front()});
  const double first_call_ms = std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();

  json kernels = json::array();
  for (const tools::WarmupJob& job :
       tools::PlanJobs(*manifest, *programs, archs)) {
    if (job.program != nullptr) kernels.push_back(Measure(job));
  }
  json summary;
  for (const std::string& arch : archs) {
    std::vector<const json*> records;
    int errors = 0;
    for (const json& r : kernels) {
      if (r["arch"] != arch) continue;
      if (r.contains("total_ms")) {
        records.push_back(&r);
      } else {
        ++errors;
      }
    }
    summary[arch] = Summary(records);
    summary[arch]["errors"] = errors;
  }
  return json{{"manifest", manifest_path},
              {"nvrtc_first_call_ms", first_call_ms},
              {"summary", summary},
              {"kernels", kernels}};
}

}  // namespace tessel::bench
