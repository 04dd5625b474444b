// The quickstart's inputs and check, shared by quickstart_aot and
// quickstart_jit so that both run the same numbers. Plain C++: the AOT
// program has no tessel library but its runtime.
#ifndef QUICKSTART_AOT_QUICKSTART_DATA_H_
#define QUICKSTART_AOT_QUICKSTART_DATA_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace quickstart {

constexpr int M = 256, N = 256, K = 256;

// Small multiples of 1/4: exact in f16, and every sum of their products is
// exact in f32, so each element has one right answer.
inline double ValueA(int64_t i, int64_t j) {
  return ((i * 3 + j * 5) % 9 - 4) / 4.0;
}
inline double ValueB(int64_t i, int64_t j) {
  return ((i * 7 + j) % 5 - 2) / 4.0;
}

// The f16 bits of a value f16 holds exactly (these inputs: |v| <= 1).
inline uint16_t F16Bits(double v) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  if ((bits & 0x7fffffffu) == 0) return static_cast<uint16_t>(sign);
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) |
                               ((bits & 0x7fffffu) >> 13));
}

// A row-major f16[rows, cols] of value(i, j), as bits.
template <typename Value>
std::vector<uint16_t> F16Matrix(int rows, int cols, Value value) {
  std::vector<uint16_t> out(static_cast<size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      out[static_cast<size_t>(i) * cols + j] = F16Bits(value(i, j));
  return out;
}

// Wrong elements of c against the float64 reference (the first few
// printed, prefixed with `who`).
inline int64_t CountWrong(const std::vector<float>& c, const char* who) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += ValueA(i, k) * ValueB(k, j);
      const double got = c[i * N + j];
      if (!(std::abs(got - want) <= 1e-6) && wrong++ < 5) {
        std::cerr << who << ": C[" << i << ", " << j << "] = " << got
                  << ", expected " << want << "\n";
      }
    }
  }
  return wrong;
}

inline bool WriteBytes(const std::string& path, const std::vector<float>& c) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(c.data()),
            static_cast<std::streamsize>(c.size() * sizeof(float)));
  return static_cast<bool>(out.flush());
}

}  // namespace quickstart

#endif  // QUICKSTART_AOT_QUICKSTART_DATA_H_
