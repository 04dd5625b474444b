// The budget of a deterministic fuzz target run as a gtest case: at most
// `executions` inputs and at most `seconds` of wall time, whichever comes
// first (CI runs without libFuzzer; the ASan build is slower, the count is
// the same). Each target reports how many inputs it ran.
//
//   FuzzBudget budget(20000, 8.0);
//   while (budget.Next()) { ... one input ... }
//   budget.Report("manifest");   // "manifest fuzz: 20000 executions ..."
//
// TESSEL_FUZZ_SEED and TESSEL_FUZZ_SCALE explore further by hand.
#ifndef TESSEL_TESTS_FUZZ_FUZZ_BUDGET_H_
#define TESSEL_TESTS_FUZZ_FUZZ_BUDGET_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessel::fuzz {

// The generators' seed: fixed in CI, TESSEL_FUZZ_SEED to explore others.
inline uint64_t FuzzSeed() {
  const char* env = std::getenv("TESSEL_FUZZ_SEED");
  return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10)
                                        : 20261201;
}

class FuzzBudget {
 public:
  // TESSEL_FUZZ_SCALE multiplies both limits (a longer local run).
  FuzzBudget(int executions, double seconds)
      : executions_(executions * Scale()), seconds_(seconds * Scale()) {}

  // Whether another input fits the budget; counts it.
  bool Next() {
    if (done_ >= executions_ || Elapsed() >= seconds_) return false;
    ++done_;
    return true;
  }
  int done() const { return done_; }

  static int Scale() {
    const char* env = std::getenv("TESSEL_FUZZ_SCALE");
    const int scale = env != nullptr ? std::atoi(env) : 1;
    return scale > 0 ? scale : 1;
  }

  void Report(const std::string& target) const {
    std::printf("%s fuzz: %d executions in %.2f s (budget %d, %.0f s)\n",
                target.c_str(), done_, Elapsed(), executions_, seconds_);
    ::testing::Test::RecordProperty(target + "_executions", done_);
  }

 private:
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

  int executions_;
  double seconds_;
  int done_ = 0;
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
};

}  // namespace tessel::fuzz

#endif  // TESSEL_TESTS_FUZZ_FUZZ_BUDGET_H_
