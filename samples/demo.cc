// tessel-demo: the README's main command. Builds the GEMM and the linear
// attention (forward and backward) tile programs, compiles them through the
// kernel cache, runs them on the GPU when there is one and on the CPU
// interpreter otherwise, checks them against float64 references and prints
//
//   kernel  shape  backend  time  rate  cache  check
//
// Without a GPU the kernels are still compiled (for --arch, default
// sm_90a: NVRTC needs no GPU), so the cache column is real either way; run
// it twice to see the misses become hits.
//
//   tessel-demo [--backend=gpu|cpu] [--arch=sm_90a] [--json=FILE]
//
// Exit status: 0 when every check passed, 1 when one failed, 2 on an error.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/execute.h"
#include "samples/gemm.h"
#include "samples/linear_attention.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"
#include "tessel/bench_report.h"
#include "tessel/version.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "usage: tessel-demo [--backend=gpu|cpu] [--arch=sm_90a] [--json=FILE]\n"
    "       tessel-demo --help | --version\n"
    "Flags take their value as --key=value or --key value.\n";

absl::StatusOr<std::vector<Workload>> DemoWorkloads(Backend backend) {
  const bool gpu = backend == Backend::kGpu;
  std::vector<Workload> out;
  GemmConfig gemm{
      .M = gpu ? 2048 : 256, .N = gpu ? 2048 : 256, .K = gpu ? 2048 : 256};
  if (gpu) {
    gemm.tile = {.block_m = 128,
                 .block_n = 128,
                 .block_k = 32,
                 .num_stages = 3,
                 .threads = 128,
                 .panel = 8};
  }
  SAMPLES_ASSIGN_OR_RETURN(Workload g, GemmWorkload(gemm));
  out.push_back(std::move(g));
  LinearAttentionConfig la =
      gpu ? LinearAttentionConfig{.B = 4, .S = 2048, .H = 8, .DK = 64, .DV = 64}
          : LinearAttentionConfig{.B = 1, .S = 128, .H = 2, .DK = 64, .DV = 64};
  SAMPLES_ASSIGN_OR_RETURN(Workload fwd, LinearAttentionForwardWorkload(la));
  out.push_back(std::move(fwd));
  SAMPLES_ASSIGN_OR_RETURN(Workload bwd, LinearAttentionBackwardWorkload(la));
  out.push_back(std::move(bwd));
  return out;
}

absl::StatusOr<int> Demo(int argc, char** argv) {
  SAMPLES_ASSIGN_OR_RETURN(Flags flags, Flags::Parse(argc, argv));
  if (flags.Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (flags.Has("version")) {
    std::cout << "tessel-demo (tessel " << version() << ")\n";
    return 0;
  }
  ExecuteOptions exec;
  const std::string backend = flags.String("backend", "");
  if (backend.empty()) {
    exec.backend = DefaultBackend();
  } else if (backend == "gpu" || backend == "cpu") {
    exec.backend = backend == "gpu" ? Backend::kGpu : Backend::kCpu;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend=", backend, ": expected gpu or cpu"));
  }
  if (exec.backend == Backend::kCpu) {
    exec.compile_arch = flags.String("arch", "sm_90a");
  }
  exec.bench = true;  // GPU: do_bench; CPU: one timed interpreter run
  exec.bench_options.warmup_ms = 10;
  exec.bench_options.rep_ms = 50;
  exec.bench_options.quantiles = bench::ReportQuantiles();
  const std::string json_path = flags.String("json", "");
  SAMPLES_RETURN_IF_ERROR(flags.CheckAllUsed());

  if (exec.backend == Backend::kCpu) {
    std::string why = GpuUnavailableReason();
    std::cout << "No GPU (" << (why.empty() ? "--backend=cpu" : why)
              << "): kernels are compiled for " << exec.compile_arch
              << " through the cache and run on the CPU interpreter.\n";
  }
  SAMPLES_ASSIGN_OR_RETURN(std::vector<Workload> workloads,
                           DemoWorkloads(exec.backend));
  std::vector<ResultRow> rows;
  bool all_passed = true;
  for (Workload& w : workloads) {
    std::cout << "running " << w.kernel << " (" << w.shape << ") ..."
              << std::endl;
    SAMPLES_ASSIGN_OR_RETURN(RunResult run, Execute(w, exec));
    SAMPLES_ASSIGN_OR_RETURN(CheckResult check, CheckOutputs(w));
    if (!check.ok) std::cout << check.report;
    all_passed = all_passed && check.ok;
    rows.push_back(MakeRow(w, run, check.ok));
  }
  std::cout << "\n" << FormatTable(rows);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << BenchJson("tessel_demo", rows).dump(2) << "\n";
    if (!out) {
      return absl::UnavailableError(
          absl::StrCat("--json=", json_path, ": cannot write the file"));
    }
  }
  return all_passed ? 0 : 1;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  absl::StatusOr<int> code = tessel::samples::Demo(argc, argv);
  if (!code.ok()) {
    std::cerr << "tessel-demo: " << code.status().message()
              << (code.status().code() == absl::StatusCode::kInvalidArgument
                      ? "; see --help"
                      : "")
              << "\n";
    return 2;
  }
  return *code;
}
