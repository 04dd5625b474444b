// Timing GPU work the way kernel papers do: warm-up, L2 flushed between runs,
// CUDA events, the median of as many runs as fit a time budget.
//
//   absl::StatusOr<tessel::BenchResult> r = tessel::do_bench(
//       [&](CUstream_st* stream) { return kernel.launch({a, b, c}, stream); },
//       {.warmup_ms = 25, .rep_ms = 100, .quantiles = {0.2, 0.5, 0.8}});
//   if (r.ok()) std::cout << r->ms << " ms (median)\n";
//
// `fn` must enqueue its work on the stream it is given (and only there):
// the events are recorded on that stream, and CUDA graph capture only sees
// work launched on it. Without a CUDA driver or device do_bench returns
// Unavailable; a failing `fn` ends the run with its status.
#ifndef TESSEL_PROFILER_H_
#define TESSEL_PROFILER_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

// The CUDA driver's handle types, declared as <cuda.h> does, so that this
// header does not need it.
struct CUstream_st;
struct CUctx_st;

namespace tessel {

// Which statistic BenchResult::ms holds.
enum class ReturnMode {
  kMedian,
  kMean,
  kMin,
  kMax,
  kAll,  // ms is the median, and BenchResult::times_ms holds every sample
};

struct BenchOptions {
  // Time spent calling fn before measuring (clocks up, caches warm).
  double warmup_ms = 25;
  // Time the measured runs should take together; sets how many there are.
  double rep_ms = 100;
  // Overwrite a buffer larger than L2 with zeros before every sample (as
  // triton.testing.do_bench does), so each run starts with a cold cache as
  // it would inside a model.
  bool flush_l2 = true;
  ReturnMode return_mode = ReturnMode::kMedian;
  // Extra quantiles of the samples, each in [0, 1] (0.5 is the median).
  std::vector<double> quantiles;
  // Capture several calls of fn in one CUDA graph and time its replays (for
  // kernels of a few microseconds, whose launch cost would otherwise be
  // timed). The calls inside one replay run back to back; L2 is flushed
  // between replays only.
  bool use_cuda_graph = false;
  // Bounds on the number of samples the budget may ask for.
  int min_reps = 5;
  int max_reps = 10000;
  // Bytes written by each flush; 0: max(256 MiB, 4 x the device's L2).
  int64_t l2_flush_bytes = 0;
  // Where fn's work goes. nullptr: a fresh non-blocking stream of the
  // context (capture cannot use the legacy default stream).
  CUstream_st* stream = nullptr;
  // nullptr: the calling thread's current context, else device 0's primary.
  CUctx_st* context = nullptr;
};

struct BenchResult {
  // Per call of fn, in milliseconds: the statistic return_mode asks for.
  double ms = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  // One per BenchOptions::quantiles, in the same order.
  std::vector<double> quantiles_ms;
  // Every sample in run order (ReturnMode::kAll only).
  std::vector<double> times_ms;
  // Samples timed, and calls of fn in each (above 1 with CUDA graphs).
  int reps = 0;
  int calls_per_sample = 1;
};

// Times fn. See the file comment.
absl::StatusOr<BenchResult> do_bench(
    absl::FunctionRef<absl::Status(CUstream_st* stream)> fn,
    const BenchOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_PROFILER_H_
