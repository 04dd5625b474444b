#include "samples/sample_main.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "samples/status_macros.h"
#include "tessel/bench_report.h"
#include "tessel/version.h"

namespace tessel::samples {
namespace {

constexpr char kCommonUsage[] =
    "  --check              compare with the float64 reference (default)\n"
    "  --bench              time it; prints TFLOP/s or GB/s and JSON\n"
    "  --backend=gpu|cpu    default: gpu when there is one, else cpu\n"
    "  --size=small|bench|<dims>\n"
    "  --json=FILE          also write the JSON report to FILE\n"
    "  --arch=ARCH          cpu backend: also compile each kernel for ARCH\n"
    "                       (e.g. sm_90a) through the kernel cache, as\n"
    "                       tessel-warmup --arch does (--compile=ARCH too)\n"
    "  --seed=N             input seed (default 1)\n"
    "  --cuda-graph         with --bench: time CUDA graph replays of\n"
    "                       back-to-back calls (no launch cost; L2 flushed\n"
    "                       between replays only); variant \"cuda_graph\"\n"
    "  --wgmma=true|false   sm_90a gemms on wgmma where they fit (default\n"
    "                       true); false keeps mma.sync everywhere\n"
    "  --tma=true|false     sm_90a: TMA copies (false: disable_tma_lower)\n"
    "  --warp-specialized=true|false  sm_90a: producer / consumer warpgroups\n"
    "                       (false: disable_warp_specialized)\n"
    "  --persistent=true|false  sm_90a: persistent grid (default true)\n"
    "  --help, --version    this text; tessel's version\n"
    "Flags take their value as --key=value or --key value.\n";

std::string Usage(const SampleSpec& spec) {
  return absl::StrCat("usage: ", spec.name, " [flags]\n", kCommonUsage,
                      spec.usage);
}

}  // namespace

// ---------------------------------------------------------------- output

namespace {

std::string Rate(const ResultRow& r) {
  if (r.run.ms <= 0) return "-";
  if (r.flops > 0) {
    return absl::StrFormat("%.3g TFLOP/s", r.flops / (r.run.ms * 1e9));
  }
  return absl::StrFormat("%.3g GB/s", r.bytes / (r.run.ms * 1e6));
}

}  // namespace

std::string FormatTable(const std::vector<ResultRow>& rows) {
  std::vector<std::vector<std::string>> cells = {
      {"kernel", "shape", "backend", "time", "rate", "cache", "check"}};
  for (const ResultRow& r : rows) {
    std::string backend = absl::StrCat(BackendName(r.run.backend));
    if (r.run.backend == Backend::kCpu) absl::StrAppend(&backend, " (interp)");
    cells.push_back(
        {r.kernel, r.shape, backend,
         absl::StrFormat("%.3f ms%s", r.run.ms, r.run.benched ? "" : "*"),
         Rate(r), r.run.cache,
         !r.check.has_value() ? "-" : (*r.check ? "pass" : "FAIL")});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (size_t r = 0; r < cells.size(); ++r) {
    for (size_t i = 0; i < cells[r].size(); ++i) {
      absl::StrAppend(&out, cells[r][i],
                      std::string(width[i] - cells[r][i].size() + 2, ' '));
    }
    out.back() = '\n';
    while (out.size() >= 2 && out[out.size() - 2] == ' ') {
      out.erase(out.size() - 2, 1);
    }
  }
  bool any_wall = std::any_of(rows.begin(), rows.end(),
                              [](const auto& r) { return !r.run.benched; });
  if (any_wall) {
    absl::StrAppend(&out,
                    "* one wall-clock run (the interpreter, or a GPU run "
                    "without --bench), not a do_bench median\n");
  }
  return out;
}

std::string WithCudaGraph(const std::string& variant) {
  return variant.empty() ? "cuda_graph" : absl::StrCat(variant, "+cuda_graph");
}

ResultRow MakeRow(const Workload& w, const RunResult& run,
                  std::optional<bool> check) {
  return ResultRow{w.kernel, w.shape, run, w.flops, w.bytes, check, w.label};
}

nlohmann::json BenchJson(const std::string& benchmark,
                         const std::vector<ResultRow>& rows) {
  bench::BenchReport report(benchmark);
  for (const ResultRow& r : rows) {
    bench::Measurement m;
    m.kernel = r.label.kernel.empty() ? r.kernel : r.label.kernel;
    m.impl = r.label.impl;
    m.pass = r.label.pass;
    m.variant = r.label.variant;
    m.dtype = r.label.dtype;
    m.shape = r.label.shape;
    m.size = r.label.size.empty() ? r.shape : r.label.size;
    m.flops = r.label.flops > 0 ? r.label.flops : r.flops;
    m.bytes = r.bytes;
    if (r.run.bench.has_value()) {
      report.Add(m, *r.run.bench);
    } else {
      absl::StrAppend(&m.impl, r.run.backend == Backend::kCpu ? ":interpreter"
                                                              : ":wallclock");
      BenchResult one;
      one.ms = one.median_ms = one.mean_ms = one.min_ms = one.max_ms = r.run.ms;
      one.quantiles_ms.assign(bench::ReportQuantiles().size(), r.run.ms);
      one.reps = 1;
      report.Add(m, one);
    }
    nlohmann::json& record = report.extra()["records"].back();
    record["name"] = r.kernel;
    record["backend"] = BackendName(r.run.backend);
    record["cache"] = r.run.cache;
    record["compile_ms"] = r.run.compile_ms;
    if (r.run.kernel_ms > 0) record["kernel_ms"] = r.run.kernel_ms;
    if (r.run.bench.has_value()) {
      record["timing"] = r.run.cuda_graph ? "do_bench+cuda_graph" : "do_bench";
      record["calls_per_sample"] = r.run.bench->calls_per_sample;
    }
    if (r.check.has_value()) record["check"] = *r.check ? "pass" : "fail";
  }
  return report.json();
}

// ---------------------------------------------------------------- main

namespace {

absl::StatusOr<int> Run(int argc, char** argv, const SampleSpec& spec) {
  SAMPLES_ASSIGN_OR_RETURN(Flags flags, Flags::Parse(argc, argv));
  if (flags.Has("help")) {
    std::cout << Usage(spec);
    return 0;
  }
  if (flags.Has("version")) {
    std::cout << spec.name << " (tessel " << version() << ")\n";
    return 0;
  }
  SAMPLES_ASSIGN_OR_RETURN(bool check, flags.Bool("check", false));
  SAMPLES_ASSIGN_OR_RETURN(bool bench, flags.Bool("bench", false));
  SAMPLES_ASSIGN_OR_RETURN(bool cuda_graph, flags.Bool("cuda-graph", false));
  SampleArgs args;
  if (spec.tunes) {
    // Read only here: elsewhere --tune stays an unknown flag.
    SAMPLES_ASSIGN_OR_RETURN(args.tune, flags.Bool("tune", false));
    bench = bench || args.tune;
  }
  if (!check && !bench) check = true;
  args.size = flags.String("size", "small");
  std::string backend = flags.String("backend", "");
  if (backend.empty()) {
    args.backend = DefaultBackend();
  } else if (backend == "gpu") {
    args.backend = Backend::kGpu;
  } else if (backend == "cpu") {
    args.backend = Backend::kCpu;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend=", backend, ": expected gpu or cpu"));
  }
  SAMPLES_ASSIGN_OR_RETURN(int64_t seed, flags.Int("seed", 1));
  args.seed = static_cast<uint64_t>(seed);
  const std::string json_path = flags.String("json", "");
  ExecuteOptions exec;
  exec.backend = args.backend;
  exec.bench = bench;
  exec.bench_options.quantiles = bench::ReportQuantiles();
  exec.bench_options.use_cuda_graph = cuda_graph;
  // --arch, as the tools spell it; --compile, the older spelling.
  exec.compile_arch = flags.String("arch", flags.String("compile", ""));
  if (!exec.compile_arch.empty() && args.backend != Backend::kCpu) {
    return absl::InvalidArgumentError(
        "--arch=ARCH is for the cpu backend (the gpu backend compiles for "
        "its device)");
  }
  SAMPLES_ASSIGN_OR_RETURN(const PassConfig switches,
                           PassConfigFromFlags(flags));
  SAMPLES_ASSIGN_OR_RETURN(std::vector<Workload> workloads,
                           spec.make(args, flags));
  SAMPLES_RETURN_IF_ERROR(flags.CheckAllUsed());
  for (Workload& w : workloads) {
    // Graph-timed records pair only with peers timed the same way.
    if (cuda_graph) w.label.variant = WithCudaGraph(w.label.variant);
    // The flags switch steps off; they never switch on what a workload's
    // step turned off itself (linear attention's mbarrier variant).
    for (Step& step : w.steps) {
      step.pass_config.disable_wgmma |= switches.disable_wgmma;
      step.pass_config.disable_tma_lower |= switches.disable_tma_lower;
      step.pass_config.disable_warp_specialized |=
          switches.disable_warp_specialized;
      step.pass_config.disable_persistent_grid |=
          switches.disable_persistent_grid;
    }
  }

  std::vector<ResultRow> rows;
  bool all_passed = true;
  for (Workload& w : workloads) {
    SAMPLES_ASSIGN_OR_RETURN(RunResult run, Execute(w, exec));
    if (bench && workloads.size() > 1) {
      // Progress of a long sweep, kept should a later workload fail.
      std::cout << "timed " << w.kernel << " " << w.shape << ": " << run.ms
                << " ms (kernel " << run.kernel_ms << " ms)" << std::endl;
    }
    ResultRow row = MakeRow(w, run, std::nullopt);
    if (check) {
      SAMPLES_ASSIGN_OR_RETURN(CheckResult c, CheckOutputs(w));
      row.check = c.ok;
      all_passed = all_passed && c.ok;
      std::cout << w.kernel << " " << w.shape << " ["
                << BackendName(run.backend) << "]\n"
                << c.report;
    }
    rows.push_back(std::move(row));
  }
  std::cout << "\n" << FormatTable(rows);
  if (spec.summary) std::cout << spec.summary(rows);
  if (bench || !json_path.empty()) {
    std::string json = BenchJson("tessel_" + spec.name, rows).dump(2);
    if (bench) std::cout << json << "\n";
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << json << "\n";
      if (!out) {
        return absl::UnavailableError(
            absl::StrCat("--json=", json_path, ": cannot write the file"));
      }
    }
  }
  return all_passed ? 0 : 1;
}

}  // namespace

absl::StatusOr<PassConfig> PassConfigFromFlags(const Flags& flags) {
  PassConfig c;
  SAMPLES_ASSIGN_OR_RETURN(const bool wgmma, flags.Bool("wgmma", true));
  SAMPLES_ASSIGN_OR_RETURN(const bool tma, flags.Bool("tma", true));
  SAMPLES_ASSIGN_OR_RETURN(const bool specialized,
                           flags.Bool("warp-specialized", true));
  SAMPLES_ASSIGN_OR_RETURN(const bool persistent,
                           flags.Bool("persistent", true));
  c.disable_wgmma = !wgmma;
  c.disable_tma_lower = !tma;
  c.disable_warp_specialized = !specialized;
  c.disable_persistent_grid = !persistent;
  return c;
}

int SampleMain(int argc, char** argv, const SampleSpec& spec) {
  absl::StatusOr<int> code = Run(argc, argv, spec);
  if (!code.ok()) {
    // One line; --help has the rest.
    std::cerr << spec.name << ": " << code.status().message()
              << (code.status().code() == absl::StatusCode::kInvalidArgument
                      ? "; see --help"
                      : "")
              << "\n";
    return 2;
  }
  return *code;
}

}  // namespace tessel::samples
