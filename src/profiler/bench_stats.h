// The host-side arithmetic of do_bench: how many runs fit a budget, and the
// statistics of the samples. No GPU needed, so it is tested on its own.
//
//   int reps = RepetitionsFor(/*budget_ms=*/100, /*estimate_ms=*/0.3, 5,
//   10000); ASSIGN_OR_RETURN(BenchResult r, Summarize(samples_ms, options));
#ifndef TESSEL_SRC_PROFILER_BENCH_STATS_H_
#define TESSEL_SRC_PROFILER_BENCH_STATS_H_

#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/profiler.h"

namespace tessel::profiler {

// The number of runs of `estimate_ms` each that fill `budget_ms`, within
// [min_reps, max_reps]. An estimate of zero (or below the timer's
// resolution) asks for max_reps.
int RepetitionsFor(double budget_ms, double estimate_ms, int min_reps,
                   int max_reps);

// The q-quantile (q in [0, 1]) of ascending `sorted`, interpolating linearly
// between neighbours (numpy's and torch.quantile's default).
double Quantile(std::span<const double> sorted, double q);

// Rejects options that cannot describe a run: negative or non-finite
// budgets, quantiles outside [0, 1], min_reps above max_reps.
absl::Status ValidateBenchOptions(const BenchOptions& options);

// Statistics of per-call samples (milliseconds, in run order).
absl::StatusOr<BenchResult> Summarize(std::vector<double> samples_ms,
                                      const BenchOptions& options);

}  // namespace tessel::profiler

#endif  // TESSEL_SRC_PROFILER_BENCH_STATS_H_
