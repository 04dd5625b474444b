#include "src/profiler/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessel::profiler {

int RepetitionsFor(double budget_ms, double estimate_ms, int min_reps,
                   int max_reps) {
  // Event timing resolves about half a microsecond: below that the estimate
  // says "very short", not how short.
  constexpr double kResolutionMs = 5e-4;
  if (!(estimate_ms >= kResolutionMs)) return max_reps;
  const double reps = std::ceil(budget_ms / estimate_ms);
  if (reps >= max_reps) return max_reps;
  return std::max(min_reps, static_cast<int>(reps));
}

double Quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

absl::Status ValidateBenchOptions(const BenchOptions& options) {
  if (!std::isfinite(options.warmup_ms) || options.warmup_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("do_bench: warmup_ms must be finite and >= 0, got ",
                     options.warmup_ms));
  }
  if (!std::isfinite(options.rep_ms) || options.rep_ms <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "do_bench: rep_ms must be finite and > 0, got ", options.rep_ms));
  }
  if (options.min_reps < 1 || options.max_reps < options.min_reps) {
    return absl::InvalidArgumentError(
        absl::StrCat("do_bench: need 1 <= min_reps <= max_reps, got min_reps=",
                     options.min_reps, " max_reps=", options.max_reps));
  }
  if (options.l2_flush_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "do_bench: l2_flush_bytes must be >= 0, got ", options.l2_flush_bytes));
  }
  for (double q : options.quantiles) {
    if (!(q >= 0 && q <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("do_bench: quantile ", q, " is outside [0, 1]"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchResult> Summarize(std::vector<double> samples_ms,
                                      const BenchOptions& options) {
  if (absl::Status s = ValidateBenchOptions(options); !s.ok()) return s;
  if (samples_ms.empty()) {
    return absl::InvalidArgumentError("do_bench: no samples to summarize");
  }
  BenchResult result;
  result.reps = static_cast<int>(samples_ms.size());
  if (options.return_mode == ReturnMode::kAll) result.times_ms = samples_ms;
  result.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) /
                   static_cast<double>(samples_ms.size());
  std::sort(samples_ms.begin(), samples_ms.end());
  result.min_ms = samples_ms.front();
  result.max_ms = samples_ms.back();
  result.median_ms = Quantile(samples_ms, 0.5);
  for (double q : options.quantiles) {
    result.quantiles_ms.push_back(Quantile(samples_ms, q));
  }
  switch (options.return_mode) {
    case ReturnMode::kMean:
      result.ms = result.mean_ms;
      break;
    case ReturnMode::kMin:
      result.ms = result.min_ms;
      break;
    case ReturnMode::kMax:
      result.ms = result.max_ms;
      break;
    case ReturnMode::kMedian:
    case ReturnMode::kAll:
      result.ms = result.median_ms;
      break;
  }
  return result;
}

}  // namespace tessel::profiler
