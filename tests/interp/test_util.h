// Helpers shared by the interpreter suites: random host tensors and
// float64 references.
//
//   tessel::HostTensor a = RandomTensor(tessel::f16, {M, K}, /*seed=*/1);
//   std::vector<double> ref = MatMul(a, b);   // float64, from a's f16 values
//   ExpectClose(c, ref, /*rtol=*/1e-5, /*atol=*/1e-5);
#ifndef TESSEL_TESTS_INTERP_TEST_UTIL_H_
#define TESSEL_TESTS_INTERP_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tessel/host_tensor.h"

namespace tessel::interp_test {

// Uniform in [lo, hi), rounded to dtype on store.
inline HostTensor RandomTensor(DataType dtype, std::vector<int64_t> shape,
                               uint32_t seed, double lo = -1.0,
                               double hi = 1.0) {
  HostTensor t(dtype, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_flat(i, dist(gen));
  return t;
}

// Small integers in [lo, hi]: exact in every float dtype and every sum here.
inline HostTensor IntegerTensor(DataType dtype, std::vector<int64_t> shape,
                                uint32_t seed, int lo = -4, int hi = 4) {
  HostTensor t(dtype, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_flat(i, dist(gen));
  return t;
}

// C = A * B in float64 from the stored values; A [M, K], B [K, N].
inline std::vector<double> MatMul(const HostTensor& a, const HostTensor& b) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double x = a.get_flat(i * k + p);
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += x * b.get_flat(p * n + j);
    }
  }
  return c;
}

// |got - want| <= atol + rtol * scale[i] for every element (scale defaults
// to |want|); reports the first few mismatches.
inline void ExpectClose(const HostTensor& got, const std::vector<double>& want,
                        double rtol, double atol,
                        const std::vector<double>& scale = {}) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  int reported = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double g = got.get_flat(i);
    const double s = scale.empty() ? std::fabs(want[i]) : scale[i];
    if (!(std::fabs(g - want[i]) <= atol + rtol * s)) {
      ++bad;
      if (reported++ < 5) {
        ADD_FAILURE() << "element " << i << ": got " << g << ", want "
                      << want[i] << " (tolerance " << atol + rtol * s << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << "mismatching elements of " << got.type_string();
}

inline void ExpectBitwiseEqual(const HostTensor& a, const HostTensor& b) {
  ASSERT_EQ(a.num_bytes(), b.num_bytes());
  int64_t differing = 0;
  for (size_t i = 0; i < a.num_bytes(); ++i)
    differing += a.data()[i] != b.data()[i];
  EXPECT_EQ(differing, 0) << "bytes differ between the two runs";
}

}  // namespace tessel::interp_test

#endif  // TESSEL_TESTS_INTERP_TEST_UTIL_H_
