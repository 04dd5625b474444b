// A CandidateEvaluator without a GPU for the autotuner's tests: each step's
// result comes from a function of the config, every call is counted, and
// Time() can move a fake clock (for the budget).
//
//   FakeEvaluator eval;
//   eval.ms_of = [](const TuneConfig& c) { return double(c.Int("x", 0)); };
//   eval.compile_error = [](const TuneConfig& c) { ... return Status ... };
#ifndef TESSEL_TESTS_AUTOTUNE_FAKE_EVALUATOR_H_
#define TESSEL_TESTS_AUTOTUNE_FAKE_EVALUATOR_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "src/autotune/search.h"

namespace tessel::autotuner::testing {

// A clock tests move by hand; safe to read from any thread.
class FakeClock {
 public:
  absl::Time Now() const {
    return absl::UnixEpoch() + absl::Nanoseconds(nanos_.load());
  }
  void Advance(absl::Duration d) { nanos_ += absl::ToInt64Nanoseconds(d); }
  std::function<absl::Time()> Fn() {
    return [this] { return Now(); };
  }

 private:
  std::atomic<int64_t> nanos_{0};
};

class FakeEvaluator : public CandidateEvaluator {
 public:
  using StatusOf = std::function<absl::Status(const TuneConfig&)>;

  // The time of each config (default 1 ms).
  std::function<double(const TuneConfig&)> ms_of;
  // Errors of each step (default: none).
  StatusOf build_error, compile_error, check_error, time_error;
  // When set, Time() advances it by the config's ms in seconds.
  FakeClock* clock = nullptr;
  // How long Compile() sleeps (to see compiles overlap).
  absl::Duration compile_sleep = absl::ZeroDuration();

  std::atomic<int> builds{0}, compiles{0}, checks{0}, times{0};
  std::atomic<int> compiling_now{0}, max_compiling{0};

  absl::StatusOr<Program> Build(const TuneConfig& config) override {
    ++builds;
    if (build_error) {
      if (absl::Status s = build_error(config); !s.ok()) return s;
    }
    return Program();
  }
  absl::StatusOr<CompiledKernel> Compile(const TuneConfig& config,
                                         const Program&) override {
    ++compiles;
    const int now = ++compiling_now;
    int seen = max_compiling.load();
    while (now > seen && !max_compiling.compare_exchange_weak(seen, now)) {
    }
    if (compile_sleep > absl::ZeroDuration()) absl::SleepFor(compile_sleep);
    --compiling_now;
    if (compile_error) {
      if (absl::Status s = compile_error(config); !s.ok()) return s;
    }
    return CompiledKernel();
  }
  absl::Status Check(const TuneConfig& config, const CompiledKernel&) override {
    ++checks;
    Record(config);
    return check_error ? check_error(config) : absl::OkStatus();
  }
  absl::StatusOr<double> Time(const TuneConfig& config,
                              const CompiledKernel&) override {
    ++times;
    Record(config);
    if (time_error) {
      if (absl::Status s = time_error(config); !s.ok()) return s;
    }
    const double ms = ms_of ? ms_of(config) : 1.0;
    if (clock != nullptr) clock->Advance(absl::Seconds(ms));
    return ms;
  }

  // Threads and configs that Check/Time ran on, in call order.
  std::vector<std::thread::id> gpu_threads;
  std::vector<TuneConfig> gpu_order;

 private:
  void Record(const TuneConfig& config) {
    std::lock_guard<std::mutex> lock(mu_);
    gpu_threads.push_back(std::this_thread::get_id());
    gpu_order.push_back(config);
  }
  std::mutex mu_;
};

}  // namespace tessel::autotuner::testing

#endif  // TESSEL_TESTS_AUTOTUNE_FAKE_EVALUATOR_H_
