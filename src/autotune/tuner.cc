#include "src/autotune/tuner.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/autotune/tune_store.h"

namespace tessel::autotuner {
namespace {

int CompileThreads(const TuneOptions& options) {
  if (options.compile_threads > 0) return options.compile_threads;
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 1, 8);
}

// Warnings go to stderr (and the progress stream) and into the result.
void Warn(const TuneOptions& options, TuneResult& result, std::string what) {
  std::fprintf(stderr, "tessel: warning: autotune: %s\n", what.c_str());
  if (options.progress != nullptr && options.progress != &std::cerr) {
    *options.progress << "warning: " << what << "\n";
  }
  result.warnings.push_back(std::move(what));
}

// Why no candidate won, one line each.
std::string FailureList(const std::vector<TuneCandidate>& candidates) {
  std::string out;
  for (const TuneCandidate& c : candidates) {
    absl::StrAppend(&out, "\n  ", c.ToString());
  }
  return out;
}

}  // namespace

absl::StatusOr<TuneResult> AutotuneWith(const TuneRequest& request,
                                        const TuneOptions& options,
                                        const DeviceIdentity& device,
                                        CandidateEvaluator& evaluator,
                                        std::function<absl::Time()> now) {
  if (request.kernel.empty()) {
    return absl::InvalidArgumentError(
        "autotune: TuneRequest::kernel is empty; name the kernel (it keys "
        "the stored result)");
  }
  absl::StatusOr<std::vector<TuneConfig>> configs = request.space.Enumerate();
  if (!configs.ok()) {
    return absl::Status(configs.status().code(),
                        absl::StrCat("autotune ", request.kernel, ": ",
                                     configs.status().message()));
  }
  const TuneKey key = MakeTuneKey(request, *configs, device, options.compile);
  TuneResult result;
  result.key = key.Hash();
  const absl::Time start = now();

  std::optional<TuneStore> store;
  if (options.persist) {
    store = TuneStore::FromOptions(options.store_dir);
    if (!store->enabled()) {
      // Off on purpose is quiet; a broken folder is worth a word.
      if (!store->switched_off()) {
        Warn(
            options, result,
            absl::StrCat("not storing the result: ", store->disabled_reason()));
      }
      store.reset();
    }
  }

  if (store.has_value() && !options.retune) {
    std::string warning;
    std::optional<StoredTune> hit = store->Load(key, &warning);
    if (!warning.empty()) Warn(options, result, warning);
    if (hit.has_value()) {
      absl::StatusOr<Program> program = evaluator.Build(hit->best);
      absl::StatusOr<CompiledKernel> kernel =
          program.ok() ? evaluator.Compile(hit->best, *program)
                       : absl::StatusOr<CompiledKernel>(program.status());
      if (kernel.ok()) {
        result.best = hit->best;
        result.best_ms = hit->best_ms;
        result.kernel = *std::move(kernel);
        result.from_store = true;
        result.store_path = store->PathFor(key);
        if (options.progress != nullptr) {
          *options.progress << absl::StrFormat(
              "autotune %s: stored winner %s (%.4g ms when tuned) from %s\n",
              request.kernel, result.best.ToString(), result.best_ms,
              result.store_path);
        }
        return result;
      }
      Warn(options, result,
           absl::StrCat("the stored winner ", hit->best.ToString(),
                        " no longer builds (", kernel.status().message(),
                        "); tuning again"));
    }
  }

  if (options.progress != nullptr) {
    *options.progress << "autotune " << request.kernel << ": "
                      << configs->size() << " configs on " << device.name
                      << " (" << device.arch << ")\n";
  }
  SearchOptions search;
  search.threads = CompileThreads(options);
  search.budget = options.budget - (now() - start);
  search.now = now;
  search.on_candidate = [&](const TuneCandidate& c) {
    if (options.progress != nullptr) *options.progress << c.ToString() << "\n";
    if (options.on_candidate) options.on_candidate(c);
  };
  SearchResult found = RunSearch(*configs, evaluator, search);
  result.candidates = std::move(found.candidates);
  result.timed = found.timed;
  result.failed = found.failed;
  result.skipped = found.skipped;
  if (found.best < 0) {
    if (found.skipped > 0) {
      return absl::DeadlineExceededError(absl::StrCat(
          "autotune ", request.kernel, ": the budget of ",
          absl::FormatDuration(options.budget),
          " ran out before any config passed", FailureList(result.candidates)));
    }
    return absl::NotFoundError(
        absl::StrCat("autotune ", request.kernel,
                     ": no config compiled and passed the check",
                     FailureList(result.candidates)));
  }
  const TuneCandidate& best = result.candidates[found.best];
  result.best = best.config;
  result.best_ms = best.ms;
  result.kernel = std::move(found.best_kernel);
  if (options.progress != nullptr) {
    *options.progress << absl::StrFormat(
        "autotune %s: best %s, %.4g ms (%d timed, %d failed, %d skipped for "
        "the budget)\n",
        request.kernel, result.best.ToString(), result.best_ms, result.timed,
        result.failed, result.skipped);
  }
  // A search cut short by the budget is stored too (the file counts what
  // was skipped): a budget is there to bound the tuning time of every run.
  if (store.has_value()) {
    absl::Status saved = store->Save(key, {.best = result.best,
                                           .best_ms = result.best_ms,
                                           .candidates = result.candidates});
    if (saved.ok()) {
      result.store_path = store->PathFor(key);
    } else {
      Warn(options, result,
           absl::StrCat("could not store the winner: ", saved.message()));
    }
  }
  return result;
}

}  // namespace tessel::autotuner
