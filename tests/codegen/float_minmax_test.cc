// The prelude's float min / max (prelude/float_minmax.cuh), element-wise and
// atomic, compiled for the host with one-thread stand-ins for the CUDA
// intrinsics it calls, against the interpreter's MinNum / MaxNum over values
// of every class: both signs, -0 and +0, denormals, infinities, NaNs. No GPU
// needed; atomic_minmax_gpu_test.cc runs the same values on a device.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

// ------------------------------------------- host stand-ins for CUDA
#define __device__
#define __forceinline__ inline

inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned int __float_as_uint(float x) {
  return std::bit_cast<unsigned int>(x);
}
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned int x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) {
  return std::bit_cast<long long>(x);
}
inline double __longlong_as_double(long long x) {
  return std::bit_cast<double>(x);
}

// Read-modify-write of one word, through memcpy: the prelude hands them
// float storage as int / unsigned pointers.
template <typename T, typename F>
T HostAtomic(T* addr, F update) {
  T old;
  std::memcpy(&old, addr, sizeof(T));
  const T now = update(old);
  std::memcpy(addr, &now, sizeof(T));
  return old;
}
inline int atomicMax(int* a, int v) {
  return HostAtomic(a, [&](int o) { return o > v ? o : v; });
}
inline int atomicMin(int* a, int v) {
  return HostAtomic(a, [&](int o) { return o < v ? o : v; });
}
inline unsigned int atomicMax(unsigned int* a, unsigned int v) {
  return HostAtomic(a, [&](unsigned int o) { return o > v ? o : v; });
}
inline unsigned int atomicMin(unsigned int* a, unsigned int v) {
  return HostAtomic(a, [&](unsigned int o) { return o < v ? o : v; });
}
inline unsigned int atomicCAS(unsigned int* a, unsigned int expected,
                              unsigned int desired) {
  return HostAtomic(
      a, [&](unsigned int o) { return o == expected ? desired : o; });
}

#include "src/codegen/prelude/float_minmax.cuh"
#include "src/interp/numeric.h"

namespace tessel {
namespace {

uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }
float FromBits(uint32_t b) { return std::bit_cast<float>(b); }

// Every class of f32 value, NaNs of both signs and payloads included.
std::vector<float> Values() {
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float norm = std::numeric_limits<float>::min();
  const float big = std::numeric_limits<float>::max();
  return {-inf,
          -big,
          -1.48f,
          -1.0f,
          -norm,
          -norm + tiny,  // largest denormal, negated
          -tiny * 3,
          -tiny,
          -0.0f,
          0.0f,
          tiny,
          tiny * 3,
          norm - tiny,
          norm,
          0.5f,
          1.0f,
          1.48f,
          big,
          inf,
          FromBits(0x7fc00000),  // quiet NaN
          FromBits(0xffc00000),  // negative quiet NaN
          FromBits(0x7f800001),  // signaling NaN
          FromBits(0xffffffff)};
}

// The same value, bit for bit; any NaN matches any NaN (payloads are not
// part of the order).
::testing::AssertionResult Same(float got, double want) {
  const float w = static_cast<float>(want);
  if (std::isnan(got) && std::isnan(w)) return ::testing::AssertionSuccess();
  if (Bits(got) == Bits(w)) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << std::hexfloat << "got " << got << " (0x" << std::hex << Bits(got)
     << "), want " << w << " (0x" << Bits(w) << ")";
  return ::testing::AssertionFailure() << os.str();
}

TEST(FloatMinMax, ReferenceOrdersSignedZerosAndIgnoresNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(std::signbit(interp::MaxNum(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(interp::MaxNum(0.0, -0.0)));
  EXPECT_TRUE(std::signbit(interp::MinNum(-0.0, 0.0)));
  EXPECT_TRUE(std::signbit(interp::MinNum(0.0, -0.0)));
  EXPECT_EQ(interp::MaxNum(nan, -3.0), -3.0);
  EXPECT_EQ(interp::MinNum(2.0, nan), 2.0);
  EXPECT_TRUE(std::isnan(interp::MaxNum(nan, nan)));
}

TEST(FloatMinMax, ElementwiseMatchesTheInterpreter) {
  for (float a : Values()) {
    for (float b : Values()) {
      SCOPED_TRACE(::testing::Message()
                   << std::hex << "a 0x" << Bits(a) << ", b 0x" << Bits(b));
      EXPECT_TRUE(Same(dev::max_num(a, b), interp::MaxNum(a, b)));
      EXPECT_TRUE(Same(dev::min_num(a, b), interp::MinNum(a, b)));
      EXPECT_TRUE(Same(static_cast<float>(dev::max_num(double(a), double(b))),
                       interp::MaxNum(a, b)));
      EXPECT_TRUE(Same(static_cast<float>(dev::min_num(double(a), double(b))),
                       interp::MinNum(a, b)));
    }
  }
}

// One update of a stored value: the case the old selection got wrong
// (v = -0.0 picked the signed atomic, where -0.0 is INT_MIN) among all
// others, NaN already stored included.
TEST(FloatMinMax, AtomicUpdateMatchesTheInterpreter) {
  for (float stored : Values()) {
    for (float v : Values()) {
      SCOPED_TRACE(::testing::Message() << std::hex << "stored 0x"
                                        << Bits(stored) << ", v 0x" << Bits(v));
      float x = stored;
      dev::atomic_max(&x, v);
      EXPECT_TRUE(Same(x, interp::MaxNum(stored, v))) << "atomic_max";
      x = stored;
      dev::atomic_min(&x, v);
      EXPECT_TRUE(Same(x, interp::MinNum(stored, v))) << "atomic_min";
    }
  }
}

// Many updates of one element end where the reference's fold does,
// whichever order they come in (blocks race in any order on a GPU).
TEST(FloatMinMax, AtomicFoldIsOrderIndependent) {
  std::vector<float> vs = Values();
  for (float start : Values()) {
    double want_max = start, want_min = start;
    for (float v : vs) {
      want_max = interp::MaxNum(want_max, v);
      want_min = interp::MinNum(want_min, v);
    }
    for (bool reverse : {false, true}) {
      float mx = start, mn = start;
      for (size_t i = 0; i < vs.size(); ++i) {
        const float v = vs[reverse ? vs.size() - 1 - i : i];
        dev::atomic_max(&mx, v);
        dev::atomic_min(&mn, v);
      }
      SCOPED_TRACE(::testing::Message() << std::hex << "start 0x" << Bits(start)
                                        << ", reverse " << reverse);
      EXPECT_TRUE(Same(mx, want_max));
      EXPECT_TRUE(Same(mn, want_min));
    }
  }
}

}  // namespace
}  // namespace tessel
