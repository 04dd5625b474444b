// The autotuner's search loop, behind an evaluator interface so that tests
// drive it without a GPU.
//
//   class FakeEvaluator : public tessel::autotuner::CandidateEvaluator {...};
//   FakeEvaluator eval;
//   tessel::autotuner::SearchResult r = tessel::autotuner::RunSearch(
//       configs, eval, {.threads = 4, .budget = absl::Seconds(30)});
//   if (r.best >= 0) ... r.candidates[r.best], r.best_kernel ...
//
// Build and Compile run on a pool of threads, in space order; Check and Time
// run on the calling thread, one candidate at a time, in space order (timings
// never overlap each other). A failing step ends that candidate, not the
// search. After the budget no step starts; what is left is reported skipped.
#ifndef TESSEL_SRC_AUTOTUNE_SEARCH_H_
#define TESSEL_SRC_AUTOTUNE_SEARCH_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tessel/autotune.h"

namespace tessel::autotuner {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // The candidate's program. Called from several threads at once.
  virtual absl::StatusOr<Program> Build(const TuneConfig& config) = 0;
  // Its kernel. Called from several threads at once.
  virtual absl::StatusOr<CompiledKernel> Compile(const TuneConfig& config,
                                                 const Program& program) = 0;
  // OK when it computes the right thing. Calling thread only.
  virtual absl::Status Check(const TuneConfig& config,
                             const CompiledKernel& kernel) = 0;
  // Its time in ms. Calling thread only.
  virtual absl::StatusOr<double> Time(const TuneConfig& config,
                                      const CompiledKernel& kernel) = 0;
};

struct SearchOptions {
  int threads = 1;  // Build/Compile threads (at least 1)
  absl::Duration budget = absl::InfiniteDuration();
  // The clock the budget is read on (tests move it by hand).
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // After each candidate is settled, in order, on the calling thread.
  std::function<void(const TuneCandidate&)> on_candidate;
};

struct SearchResult {
  std::vector<TuneCandidate> candidates;  // one per config, in order
  int best = -1;                          // index of the fastest timed
  CompiledKernel best_kernel;
  int timed = 0;
  int failed = 0;
  int skipped = 0;
};

SearchResult RunSearch(const std::vector<TuneConfig>& configs,
                       CandidateEvaluator& evaluator,
                       const SearchOptions& options);

}  // namespace tessel::autotuner

#endif  // TESSEL_SRC_AUTOTUNE_SEARCH_H_
