#include "tessel/bench_report.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tessel/device.h"
#include "tessel/version.h"

namespace tessel::bench {
namespace {

nlohmann::json MeasurementJson(const Measurement& m) {
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [name, extent] : m.shape) shape[name] = extent;
  nlohmann::json j = {{"kernel", m.kernel}, {"impl", m.impl},
                      {"pass", m.pass},     {"variant", m.variant},
                      {"dtype", m.dtype},   {"shape", shape},
                      {"size", m.size},     {"flops", m.flops}};
  if (m.bytes > 0) j["bytes"] = m.bytes;
  return j;
}

}  // namespace

BenchReport::BenchReport(std::string benchmark) {
  json_["benchmark"] = std::move(benchmark);
  json_["tessel_version"] = std::string(version());
  json_["device"] = DeviceJson();
  json_["records"] = nlohmann::json::array();
}

void BenchReport::Add(const Measurement& m, const BenchResult& result) {
  nlohmann::json j = MeasurementJson(m);
  j["ms"] = result.median_ms;
  j["mean_ms"] = result.mean_ms;
  j["min_ms"] = result.min_ms;
  j["quantiles"] = ReportQuantiles();
  j["quantiles_ms"] = result.quantiles_ms;
  j["reps"] = result.reps;
  if (result.median_ms > 0) {
    const double seconds = result.median_ms * 1e-3;
    if (m.flops > 0) j["tflops"] = m.flops / seconds / 1e12;
    if (m.bytes > 0) j["gbps"] = m.bytes / seconds / 1e9;
  }
  json_["records"].push_back(std::move(j));
}

void BenchReport::AddError(const Measurement& m, const absl::Status& status) {
  nlohmann::json j = MeasurementJson(m);
  j["error"] = status.ToString();
  json_["records"].push_back(std::move(j));
}

absl::Status BenchReport::Write(const std::string& path) const {
  const std::string text = json_.dump(2) + "\n";
  if (path.empty()) {
    std::cout << text;
    return absl::OkStatus();
  }
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

nlohmann::json DeviceJson() {
  absl::StatusOr<DeviceInfo> info = GetDeviceInfo();
  if (!info.ok()) return {{"error", std::string(info.status().message())}};
  nlohmann::json j;
  if (!info->name.empty()) j["name"] = info->name;
  if (!info->arch.empty()) j["arch"] = info->arch;
  if (info->multiprocessors > 0) j["sms"] = info->multiprocessors;
  j["driver_version"] = info->driver_version;
  return j;
}

}  // namespace tessel::bench
