// The JSON every tessel benchmark binary writes, so that bench/device.py can
// merge them and chart tessel against its peers (schema: docs/benchmarks.md).
//
// clang-format off
//   BenchReport report("cublas_gemm");
//   report.Add({.kernel = "gemm", .impl = "cublas", .variant = "NN",
//               .dtype = "f16", .shape = {{"M", 4096}, {"N", 4096}, {"K", 4096}},
//               .size = "4096^3", .flops = 2.0 * 4096 * 4096 * 4096},
//              bench_result);
//   return report.Write(out_path);   // stdout when empty
// clang-format on
#ifndef TESSEL_BENCH_REPORT_H_
#define TESSEL_BENCH_REPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "tessel/profiler.h"

namespace tessel::bench {

// What was measured; the timing comes from a BenchResult.
struct Measurement {
  std::string kernel;        // family: "gemm", "flash_attention", ...
  std::string impl;          // "tessel", "cublas", "torch_sdpa", ...
  std::string pass = "fwd";  // "fwd" or "fwd+bwd"
  std::string variant;       // "NN", "causal", ... (empty when none)
  std::string dtype;         // input element type: "f16", "bf16", ...
  std::vector<std::pair<std::string, int64_t>> shape;  // named dimensions
  std::string size;  // the chart's x label: "4096^3", "B8 S4096 H16 D128"
  double flops = 0;  // useful floating-point operations of one call
  double bytes = 0;  // minimum bytes moved by one call (0: not counted)
};

// The quantiles every report asks do_bench for (p20, median, p80).
inline const std::vector<double>& ReportQuantiles() {
  static const std::vector<double> q = {0.2, 0.5, 0.8};
  return q;
}

class BenchReport {
 public:
  explicit BenchReport(std::string benchmark);

  // Records a measurement timed by do_bench (with ReportQuantiles()).
  void Add(const Measurement& m, const BenchResult& result);
  // Records a measurement that could not be made, and why.
  void AddError(const Measurement& m, const absl::Status& status);
  // Free-form top-level fields ("cublas_version", ...).
  nlohmann::json& extra() { return json_; }

  // Writes the report to `path` (stdout when empty).
  absl::Status Write(const std::string& path) const;
  const nlohmann::json& json() const { return json_; }

 private:
  nlohmann::json json_;
};

// {"name": ..., "arch": ..., "driver_version": ...} of the current device, or
// {"error": why} without one.
nlohmann::json DeviceJson();

}  // namespace tessel::bench

#endif  // TESSEL_BENCH_REPORT_H_
