// What the random program generators share (random_tile_programs.cc,
// random_staged_programs.cc): the dice, the arguments' roles and the
// tolerances against the interpreter.
#ifndef TESSEL_TESTS_FUZZ_RANDOM_CASE_PARTS_H_
#define TESSEL_TESTS_FUZZ_RANDOM_CASE_PARTS_H_

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessel/tessel.h"
#include "tests/codegen/seed_cases.h"

namespace tessel::fuzz {

// Tolerances against the interpreter, which sums in its own order (see
// tests/codegen/seed_cases.cc for the reasoning): f32 sums of at most ~1100
// terms of magnitude <= 1 differ by order by ~1e-5; a 16-bit result may then
// land on the neighbouring value: one ulp is at most 2^-10 of it in f16 and
// 2^-7 in bf16 (the H200 showed such flips), rtol allows two.
inline constexpr double kF32Rtol = 1e-4, kF32Atol = 2e-4;
inline constexpr double kF16Rtol = 2e-3, kBf16Rtol = 1.6e-2, kHalfAtol = 2e-3;

inline double Rtol(DataType t) {
  return t == f16 ? kF16Rtol : t == bf16 ? kBf16Rtol : kF32Rtol;
}
inline double Atol(DataType t) { return t == f32 ? kF32Atol : kHalfAtol; }

class Dice {
 public:
  explicit Dice(uint64_t seed) : rng_(seed) {}
  int Pick(int n) { return static_cast<int>(rng_() % uint64_t(n)); }
  bool Chance(int percent) { return Pick(100) < percent; }
  template <typename V>
  V OneOf(std::initializer_list<V> values) {
    return values.begin()[Pick(static_cast<int>(values.size()))];
  }
  // A size in [1, max], a multiple of `tile` a third of the time.
  int64_t Size(int64_t max, int64_t tile) {
    if (Chance(33)) return tile * (1 + Pick(static_cast<int>(max / tile)));
    return 1 + Pick(static_cast<int>(max));
  }

 private:
  std::mt19937_64 rng_;
};

inline seed_test::Argument In(std::string name, DataType t,
                              std::vector<int64_t> shape) {
  return {std::move(name), t, std::move(shape), seed_test::Role::kInput};
}
inline seed_test::Argument Out(std::string name, DataType t,
                               std::vector<int64_t> shape) {
  return {std::move(name), t, std::move(shape), seed_test::Role::kOutput};
}
inline seed_test::Argument Acc(std::string name, DataType t,
                               std::vector<int64_t> shape) {
  return {std::move(name), t, std::move(shape), seed_test::Role::kAccumulated};
}

}  // namespace tessel::fuzz

#endif  // TESSEL_TESTS_FUZZ_RANDOM_CASE_PARTS_H_
