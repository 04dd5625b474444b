#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/context.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "jit/event.h"
#include "src/profiler/bench_stats.h"
#include "src/profiler/profiler_driver.h"
#include "tessel/profiler.h"

namespace tessel {
namespace {

using jit::DriverApi;
using jit::Event;
using profiler::ProfilerDriverApi;

// Calls of fn whose timing gives the first estimate.
constexpr int kEstimateCalls = 5;
// With CUDA graphs: one replay should last about this long, so that the
// replay's own launch cost is small next to it.
constexpr double kGraphReplayMs = 1.0;
constexpr int kMaxCallsPerGraph = 1000;
constexpr int64_t kMinFlushBytes = int64_t{256} << 20;

absl::Status WithContext(absl::Status status, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("do_bench: ", what, ": ", status.message()));
}

absl::StatusOr<int64_t> FlushBytes(const BenchOptions& options,
                                   CUcontext context) {
  if (options.l2_flush_bytes > 0) return options.l2_flush_bytes;
  absl::StatusOr<int> l2 =
      jit::DeviceAttribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, context);
  if (!l2.ok()) return l2.status();
  return std::max(kMinFlushBytes, int64_t{4} * *l2);
}

// Milliseconds between two events recorded on the stream.
absl::StatusOr<double> Elapsed(const Event& start, const Event& end) {
  absl::StatusOr<float> ms = jit::ElapsedMilliseconds(start, end);
  if (!ms.ok()) return ms.status();
  return static_cast<double>(*ms);
}

// A CUDA graph holding `calls` calls of fn, captured from `stream`.
class CapturedCalls {
 public:
  CapturedCalls(const DriverApi& api, const ProfilerDriverApi& extra)
      : api_(api), extra_(extra) {}
  ~CapturedCalls() {
    if (exec_ != nullptr) extra_.cuGraphExecDestroy(exec_);
    if (graph_ != nullptr) extra_.cuGraphDestroy(graph_);
  }
  CapturedCalls(const CapturedCalls&) = delete;
  CapturedCalls& operator=(const CapturedCalls&) = delete;

  absl::Status Capture(absl::FunctionRef<absl::Status(CUstream)> fn,
                       CUstream stream, int calls) {
    if (absl::Status s = jit::CuResultToStatus(
            api_,
            extra_.cuStreamBeginCapture(stream,
                                        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "cuStreamBeginCapture");
        !s.ok()) {
      return s;
    }
    absl::Status called;
    for (int i = 0; i < calls && called.ok(); ++i) called = fn(stream);
    // Always end the capture, so that the stream is usable afterwards.
    const CUresult ended = extra_.cuStreamEndCapture(stream, &graph_);
    if (!called.ok()) {
      return absl::Status(
          called.code(),
          absl::StrCat("fn failed while captured into a CUDA graph (it must "
                       "enqueue work only on the stream it is given): ",
                       called.message()));
    }
    if (absl::Status s = jit::CuResultToStatus(api_, ended,
                                               "cuStreamEndCapture (fn must "
                                               "launch only on its stream)");
        !s.ok()) {
      return s;
    }
    // Work sent elsewhere (say the legacy stream) is not captured: an empty
    // graph would time nothing and report it as fast.
    size_t nodes = 0;
    if (absl::Status s = jit::CuResultToStatus(
            api_, extra_.cuGraphGetNodes(graph_, nullptr, &nodes),
            "cuGraphGetNodes");
        !s.ok()) {
      return s;
    }
    if (nodes == 0) {
      return absl::FailedPreconditionError(
          "fn enqueued no work on the stream it was given, so the CUDA graph "
          "is empty (fn must launch on that stream)");
    }
    return jit::CuResultToStatus(api_,
                                 extra_.cuGraphInstantiate(&exec_, graph_, 0),
                                 "cuGraphInstantiate");
  }

  absl::Status Launch(CUstream stream) const {
    return jit::CuResultToStatus(api_, extra_.cuGraphLaunch(exec_, stream),
                                 "cuGraphLaunch");
  }

 private:
  const DriverApi& api_;
  const ProfilerDriverApi& extra_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace

absl::StatusOr<BenchResult> do_bench(
    absl::FunctionRef<absl::Status(CUstream_st* stream)> fn,
    const BenchOptions& options) {
  if (absl::Status s = profiler::ValidateBenchOptions(options); !s.ok()) {
    return s;
  }
  absl::StatusOr<const DriverApi*> driver = jit::Driver();
  if (!driver.ok()) return driver.status();
  const DriverApi& api = **driver;
  absl::StatusOr<const ProfilerDriverApi*> extra = profiler::ProfilerDriver();
  if (!extra.ok()) return extra.status();
  absl::StatusOr<CUcontext> context = jit::ResolveContext(options.context);
  if (!context.ok()) return context.status();
  jit::ScopedContext current(api, *context);
  if (!current.status().ok()) return current.status();

  CUstream stream = options.stream;
  if (stream == nullptr) {
    if (absl::Status s = TESSEL_CU_CALL(
            api, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        !s.ok()) {
      return s;
    }
  }
  absl::Cleanup destroy_stream = [&] {
    if (stream != options.stream) {
      api.cuStreamSynchronize(stream);
      api.cuStreamDestroy(stream);
    }
  };
  auto sync = [&] { return TESSEL_CU_CALL(api, cuStreamSynchronize(stream)); };

  jit::DeviceBuffer flush_buffer;
  if (options.flush_l2) {
    absl::StatusOr<int64_t> bytes = FlushBytes(options, *context);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<jit::DeviceBuffer> buffer =
        jit::DeviceBuffer::Allocate(static_cast<size_t>(*bytes), *context);
    if (!buffer.ok()) {
      return WithContext(buffer.status(), "allocating the L2 flush buffer");
    }
    flush_buffer = *std::move(buffer);
  }
  // Zeros, as triton.testing.do_bench's cache.zero_(): the peers are timed
  // that way, and the value left in L2 changes what the next kernel pays
  // (H200: torch.compile's rms_norm 4096x8192 took 0.0366 ms after a zero
  // flush, 0.0552 after fill_(1); 8d2b18f:tools/dev/s10_flush_probe.py).
  auto flush = [&]() -> absl::Status {
    if (!options.flush_l2) return absl::OkStatus();
    return jit::CuResultToStatus(
        api,
        (*extra)->cuMemsetD32Async(flush_buffer.ptr(), 0,
                                   flush_buffer.size() / 4, stream),
        "cuMemsetD32Async (L2 flush)");
  };

  absl::StatusOr<Event> start = Event::Create(*context);
  absl::StatusOr<Event> end = Event::Create(*context);
  if (!start.ok()) return start.status();
  if (!end.ok()) return end.status();

  // First call untimed: it may compile, load or allocate.
  if (absl::Status s = fn(stream); !s.ok()) return s;
  if (absl::Status s = sync(); !s.ok()) {
    return WithContext(s, "waiting for fn's first call");
  }

  // What one sample runs: fn, or a graph replaying many calls of it.
  int calls_per_sample = 1;
  CapturedCalls graph(api, **extra);
  if (options.use_cuda_graph) {
    if (absl::Status s = start->Record(stream); !s.ok()) return s;
    for (int i = 0; i < kEstimateCalls; ++i) {
      if (absl::Status s = fn(stream); !s.ok()) return s;
    }
    if (absl::Status s = end->Record(stream); !s.ok()) return s;
    absl::StatusOr<double> total = Elapsed(*start, *end);
    if (!total.ok()) return total.status();
    const double per_call = *total / kEstimateCalls;
    calls_per_sample = profiler::RepetitionsFor(kGraphReplayMs, per_call, 1,
                                                kMaxCallsPerGraph);
    if (absl::Status s = graph.Capture(fn, stream, calls_per_sample); !s.ok()) {
      return WithContext(s, "capturing a CUDA graph");
    }
  }
  auto run_sample = [&]() -> absl::Status {
    return options.use_cuda_graph ? graph.Launch(stream) : fn(stream);
  };

  // Estimate a sample's cost, flush included: the budgets are wall time.
  if (absl::Status s = start->Record(stream); !s.ok()) return s;
  for (int i = 0; i < kEstimateCalls; ++i) {
    if (absl::Status s = flush(); !s.ok()) return s;
    if (absl::Status s = run_sample(); !s.ok()) return s;
  }
  if (absl::Status s = end->Record(stream); !s.ok()) return s;
  absl::StatusOr<double> estimate_total = Elapsed(*start, *end);
  if (!estimate_total.ok()) return estimate_total.status();
  const double estimate_ms = *estimate_total / kEstimateCalls;

  if (options.warmup_ms > 0) {
    const int warmups = profiler::RepetitionsFor(options.warmup_ms, estimate_ms,
                                                 1, options.max_reps);
    for (int i = 0; i < warmups; ++i) {
      if (absl::Status s = flush(); !s.ok()) return s;
      if (absl::Status s = run_sample(); !s.ok()) return s;
    }
  }

  const int reps = profiler::RepetitionsFor(options.rep_ms, estimate_ms,
                                            options.min_reps, options.max_reps);
  std::vector<Event> starts, ends;
  starts.reserve(reps);
  ends.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    absl::StatusOr<Event> a = Event::Create(*context);
    absl::StatusOr<Event> b = Event::Create(*context);
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    starts.push_back(*std::move(a));
    ends.push_back(*std::move(b));
  }
  // Everything is enqueued before the first wait, so the host never stalls
  // the GPU between samples.
  for (int i = 0; i < reps; ++i) {
    if (absl::Status s = flush(); !s.ok()) return s;
    if (absl::Status s = starts[i].Record(stream); !s.ok()) return s;
    if (absl::Status s = run_sample(); !s.ok()) return s;
    if (absl::Status s = ends[i].Record(stream); !s.ok()) return s;
  }
  if (absl::Status s = sync(); !s.ok()) {
    return WithContext(s, "waiting for the timed runs");
  }
  std::vector<double> samples;
  samples.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    absl::StatusOr<double> ms = Elapsed(starts[i], ends[i]);
    if (!ms.ok()) return ms.status();
    samples.push_back(*ms / calls_per_sample);
  }
  absl::StatusOr<BenchResult> result =
      profiler::Summarize(std::move(samples), options);
  if (result.ok()) result->calls_per_sample = calls_per_sample;
  return result;
}

}  // namespace tessel
