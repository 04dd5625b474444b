// Each dtype's rounding, bit for bit: the conversion routines themselves,
// host tensors, and values stored by running programs (copies into narrow
// tensors, per-op rounding of f16 arithmetic, f32 accumulation in gemm,
// f64 kept exact).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/interp/numeric.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/interp/interp_programs.h"

namespace tessel {
namespace {

using interp::DecodeFloat;
using interp::EncodeFloat;

struct BitsCase {
  double value;
  uint64_t bits;
};

void ExpectEncodes(DataType t, const std::vector<BitsCase>& cases) {
  for (const BitsCase& c : cases) {
    EXPECT_EQ(EncodeFloat(t, c.value), c.bits)
        << dtype_name(t) << " of " << c.value;
  }
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(RoundingTest, F16) {
  ExpectEncodes(f16, {
                         {1.0, 0x3c00},
                         {-2.0, 0xc000},
                         {1.0 / 3.0, 0x3555},
                         {1.0 + 0x1p-11, 0x3c00},      // tie -> even
                         {1.0 + 3 * 0x1p-11, 0x3c02},  // tie -> even (up)
                         {1.0 + 0x1p-11 + 0x1p-30, 0x3c01},
                         {65504.0, 0x7bff},
                         {65519.0, 0x7bff},
                         {65520.0, 0x7c00},  // tie at the top -> inf
                         {1e6, 0x7c00},
                         {-kInf, 0xfc00},
                         {0x1p-24, 0x0001},  // smallest subnormal
                         {0x1p-25, 0x0000},  // tie -> even (zero)
                         {1.5 * 0x1p-25, 0x0001},
                         {0x1p-14, 0x0400},  // smallest normal
                         {-0.0, 0x8000},
                         {kNaN, 0x7fff},
                     });
  EXPECT_EQ(DecodeFloat(f16, 0x3555), 0.333251953125);
  EXPECT_EQ(DecodeFloat(f16, 0x0001), 0x1p-24);
  EXPECT_TRUE(std::isinf(DecodeFloat(f16, 0x7c00)));
  EXPECT_TRUE(std::isnan(DecodeFloat(f16, 0x7e00)));
}

TEST(RoundingTest, BF16) {
  ExpectEncodes(bf16, {
                          {1.0, 0x3f80},
                          {3.14159265, 0x4049},        // 3.140625
                          {1.0 + 0x1p-8, 0x3f80},      // tie -> even
                          {1.0 + 3 * 0x1p-8, 0x3f82},  // tie -> even (up)
                          {-0.1, 0xbdcd},
                          {3.3895313892515355e38, 0x7f7f},  // largest finite
                          {3.5e38, 0x7f80},                 // -> inf
                          {0x1p-133, 0x0001},  // smallest subnormal
                          {kNaN, 0x7fff},
                      });
}

TEST(RoundingTest, Fp8E4M3SaturatesAndHasNoInfinity) {
  ExpectEncodes(fp8_e4m3,
                {
                    {1.0, 0x38},
                    {0.3, 0x2a},  // 0.3125
                    {-1.75, 0xbe},
                    {448.0, 0x7e},
                    {464.0, 0x7e},  // tie between 448 and (NaN) 480: even
                    {500.0, 0x7e},  // saturates
                    {kInf, 0x7e},
                    {-1e9, 0xfe},
                    {0x1p-9, 0x01},   // smallest subnormal
                    {0x1p-10, 0x00},  // tie -> even (zero)
                    {3 * 0x1p-10, 0x02},
                    {kNaN, 0x7f},
                });
  EXPECT_EQ(DecodeFloat(fp8_e4m3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(DecodeFloat(fp8_e4m3, 0x7f)));
  EXPECT_EQ(DecodeFloat(fp8_e4m3, 0x78), 256.0);  // exponent 1111 is finite
}

TEST(RoundingTest, Fp8E5M2Saturates) {
  ExpectEncodes(fp8_e5m2, {
                              {1.0, 0x3c},
                              {0.3, 0x35},  // 0.3125
                              {57344.0, 0x7b},
                              {61440.0, 0x7b},  // would round to inf: saturates
                              {kInf, 0x7b},
                              {-1e6, 0xfb},
                              {0x1p-16, 0x01},       // smallest subnormal
                              {1.0 + 0x1p-3, 0x3c},  // tie -> even
                              {kNaN, 0x7f},
                          });
  EXPECT_TRUE(std::isinf(DecodeFloat(fp8_e5m2, 0x7c)));
}

TEST(RoundingTest, F32AndIntegers) {
  EXPECT_EQ(EncodeFloat(f32, 0.1), 0x3dcccccdu);
  EXPECT_EQ(EncodeFloat(f32, 1.0 + 0x1p-24), 0x3f800000u);  // tie -> even
  EXPECT_EQ(interp::WrapInt(i8, 200), -56);
  EXPECT_EQ(interp::WrapInt(u32, -1), 4294967295);
  EXPECT_EQ(interp::FloatToInt(i32, -2.9), -2);          // toward zero
  EXPECT_EQ(interp::FloatToInt(i32, 1e20), 2147483647);  // saturates
  EXPECT_EQ(interp::FloatToInt(u8, -3.0), 0);
  EXPECT_EQ(interp::FloatToInt(i32, kNaN), 0);
  EXPECT_EQ(interp::FloatToInt(i64, 1e30), INT64_MAX);
}

TEST(HostTensorTest, StoresTheDtypeBitsAndChecksShapes) {
  HostTensor t(bf16, {2, 3});
  t.set({1, 2}, 3.14159265);
  EXPECT_EQ(t.at({1, 2}), 3.140625);
  uint16_t bits;
  std::memcpy(&bits, t.data() + 5 * 2, 2);
  EXPECT_EQ(bits, 0x4049);
  EXPECT_EQ(t.type_string(), "bf16[2, 3]");
  EXPECT_EQ(t.num_bytes(), 12u);

  HostTensor bad(f32, {4, -1});
  EXPECT_THAT(bad.status().message(),
              testing::HasSubstr("negative dimension -1"));
  EXPECT_FALSE(HostTensor::Create(f16, {-2}).ok());
  EXPECT_FALSE(
      HostTensor::FromDoubles(f16, {2}, std::vector<double>{1, 2, 3}).ok());

  HostTensor big(i64, {1});
  big.set_flat_int(0, (int64_t{1} << 62) + 1);
  EXPECT_EQ(big.get_flat_int(0), (int64_t{1} << 62) + 1);
}

// Copies f32 values into tensors of each narrow dtype through a fragment of
// that dtype; the stored bits must be the hardware's.
TEST(ProgramRoundingTest, CopiesStoreExactBitPatterns) {
  const std::vector<double> values = {1.0 / 3.0, 1.0 + 0x1p-11, 65520.0,
                                      464.0,     0x1p-25,       -0.1};
  const int n = static_cast<int>(values.size());
  struct Expect {
    DataType t;
    std::vector<uint64_t> bits;
  };
  const Expect expects[] = {
      {f16, {0x3555, 0x3c00, 0x7c00, 0x5f40, 0x0000, 0xae66}},
      {bf16, {0x3eab, 0x3f80, 0x4780, 0x43e8, 0x3300, 0xbdcd}},
      {fp8_e4m3, {0x2b, 0x38, 0x7e, 0x7e, 0x00, 0x9d}},
      {fp8_e5m2, {0x35, 0x3c, 0x7b, 0x5f, 0x00, 0xae}},
  };
  for (const Expect& e : expects) {
    SCOPED_TRACE(dtype_name(e.t));
    absl::StatusOr<Program> prog = interp_test::RoundingCopyProgram(e.t, n);
    ASSERT_TRUE(prog.ok()) << prog.status();
    absl::StatusOr<HostTensor> x = HostTensor::FromDoubles(f32, {n}, values);
    ASSERT_TRUE(x.ok());
    HostTensor y(e.t, {n});
    ASSERT_TRUE(interpret(*prog, {&*x, &y}).ok());
    for (int i = 0; i < n; ++i) {
      uint64_t got = 0;
      std::memcpy(&got, y.data() + i * dtype_bytes(e.t), dtype_bytes(e.t));
      EXPECT_EQ(got, e.bits[i]) << "value " << values[i];
    }
  }
}

TEST(ProgramRoundingTest, F16ArithmeticRoundsEveryOp) {
  // (2048 + 1) + 1 in f16: each add rounds (ties to even) back to 2048; one
  // rounding at the end would give 2050.
  absl::StatusOr<Program> prog = interp_test::F16ArithmeticProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  absl::StatusOr<HostTensor> x = HostTensor::FromDoubles(
      f16, {4}, std::vector<double>{2048, 2050, 1, -2048});
  ASSERT_TRUE(x.ok());
  HostTensor y(f16, {4});
  ASSERT_TRUE(interpret(*prog, {&*x, &y}).ok());
  EXPECT_EQ(y.at({0}), 2048);
  EXPECT_EQ(y.at({1}), 2052);  // 2051 ties to 2052, then 2053 ties to 2052
  EXPECT_EQ(y.at({2}), 3);
  EXPECT_EQ(y.at({3}), -2046);
}

// One row of A times one column of B where the f32 running sum loses a bit
// (interp_test::TinyGemmProgram).
TEST(ProgramRoundingTest, GemmAccumulatesInF32OrF64AsTheIrSays) {
  for (auto [in, acc, want] :
       {std::tuple{f16, f32, 0.0}, std::tuple{f64, f64, 1.0}}) {
    SCOPED_TRACE(dtype_name(acc));
    absl::StatusOr<Program> prog = interp_test::TinyGemmProgram(in, acc);
    ASSERT_TRUE(prog.ok()) << prog.status();
    HostTensor a(in, {16, 16}), b(in, {16, 16}), c(acc, {16, 16});
    // 4096*4096 + 1*1 - 4096*4096: the f32 sum 2^24 + 1 ties to 2^24.
    a.set({0, 0}, 4096);
    a.set({0, 1}, 1);
    a.set({0, 2}, -4096);
    b.set({0, 0}, 4096);
    b.set({1, 0}, 1);
    b.set({2, 0}, 4096);
    ASSERT_TRUE(interpret(*prog, {&a, &b, &c}).ok());
    EXPECT_EQ(c.at({0, 0}), want);
  }
}

TEST(ProgramRoundingTest, F64StaysExact) {
  absl::StatusOr<Program> prog = interp_test::F64ScalarProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  // a*b + 1 = 2 + 2^-29 (+ 2^-60, lost); in f32 a and b would be 1.
  const double a = 1.0 + 0x1p-30, b = 1.0 + 0x1p-30;
  absl::StatusOr<HostTensor> x =
      HostTensor::FromDoubles(f64, {2}, std::vector<double>{a, b});
  ASSERT_TRUE(x.ok());
  HostTensor y(f64, {1});
  ASSERT_TRUE(interpret(*prog, {&*x, &y}).ok());
  EXPECT_EQ(y.at({0}), 2.0 + 0x1p-29);
}

}  // namespace
}  // namespace tessel
