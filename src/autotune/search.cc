#include "src/autotune/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tessel::autotuner {
namespace {

// What a compile worker leaves for the tuning thread.
struct Compiled {
  bool ready = false;
  bool skipped = false;  // the budget was spent before it started
  TuneOutcome failure = TuneOutcome::kTimed;  // kTimed: no failure
  absl::Status status;
  CompiledKernel kernel;
  double compile_ms = 0;
};

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

SearchResult RunSearch(const std::vector<TuneConfig>& configs,
                       CandidateEvaluator& evaluator,
                       const SearchOptions& options) {
  const int total = static_cast<int>(configs.size());
  const absl::Time deadline = options.budget == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : options.now() + options.budget;
  auto spent = [&] { return options.now() >= deadline; };

  absl::Mutex mu;
  std::vector<Compiled> slots(configs.size());
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  auto worker = [&] {
    while (!stop.load()) {
      const int i = next.fetch_add(1);
      if (i >= total) return;
      Compiled c;
      if (spent()) {
        c.skipped = true;
      } else {
        const auto start = std::chrono::steady_clock::now();
        absl::StatusOr<Program> program = evaluator.Build(configs[i]);
        if (!program.ok()) {
          c.failure = TuneOutcome::kBuildFailed;
          c.status = program.status();
        } else {
          absl::StatusOr<CompiledKernel> kernel =
              evaluator.Compile(configs[i], *program);
          if (!kernel.ok()) {
            c.failure = TuneOutcome::kCompileFailed;
            c.status = kernel.status();
          } else {
            c.kernel = *std::move(kernel);
          }
        }
        c.compile_ms = MsSince(start);
      }
      c.ready = true;
      absl::MutexLock lock(&mu);
      slots[i] = std::move(c);
    }
  };
  const int threads = std::clamp(options.threads, 1, std::max(total, 1));
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);

  SearchResult result;
  result.candidates.resize(configs.size());
  for (int i = 0; i < total; ++i) {
    Compiled c;
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](Compiled* slot) { return slot->ready; }, &slots[i]));
      c = std::move(slots[i]);
    }
    TuneCandidate& record = result.candidates[i];
    record.index = i;
    record.total = total;
    record.config = configs[i];
    record.compile_ms = c.compile_ms;
    if (c.skipped) {
      record.outcome = TuneOutcome::kSkippedBudget;
    } else if (c.failure != TuneOutcome::kTimed) {
      record.outcome = c.failure;
      record.status = c.status;
    } else if (spent()) {
      record.outcome = TuneOutcome::kSkippedBudget;
    } else if (absl::Status checked = evaluator.Check(configs[i], c.kernel);
               !checked.ok()) {
      record.outcome = TuneOutcome::kCheckFailed;
      record.status = checked;
    } else if (spent()) {
      record.outcome = TuneOutcome::kSkippedBudget;
    } else {
      absl::StatusOr<double> ms = evaluator.Time(configs[i], c.kernel);
      if (ms.ok() && !(std::isfinite(*ms) && *ms >= 0)) {
        ms = absl::InternalError(absl::StrCat("the timing is ", *ms, " ms"));
      }
      if (!ms.ok()) {
        record.outcome = TuneOutcome::kTimingFailed;
        record.status = ms.status();
      } else {
        record.outcome = TuneOutcome::kTimed;
        record.ms = *ms;
        // Ties go to the earlier config: the space's order is a preference.
        if (result.best < 0 || *ms < result.candidates[result.best].ms) {
          result.best = i;
          result.best_kernel = c.kernel;
        }
      }
    }
    switch (record.outcome) {
      case TuneOutcome::kTimed:
        ++result.timed;
        break;
      case TuneOutcome::kSkippedBudget:
        ++result.skipped;
        break;
      default:
        ++result.failed;
    }
    if (options.on_candidate) options.on_candidate(record);
  }
  stop.store(true);
  for (std::thread& t : pool) t.join();
  return result;
}

}  // namespace tessel::autotuner
