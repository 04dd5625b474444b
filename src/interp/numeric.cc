#include "src/interp/numeric.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tessel::interp {
namespace {

// A narrow binary float format: sign, ebits exponent, mbits mantissa.
struct NarrowFormat {
  int ebits;
  int mbits;
  bool has_inf;       // IEEE-like: all-ones exponent is inf / NaN
  bool saturate;      // overflow gives the largest finite value, not inf
  uint32_t nan_bits;  // canonical NaN
  uint32_t max_bits;  // largest finite value (positive)
  uint32_t inf_bits;  // +inf (when has_inf)
};

constexpr NarrowFormat kF16{5, 10, true, false, 0x7fff, 0x7bff, 0x7c00};
constexpr NarrowFormat kBF16{8, 7, true, false, 0x7fff, 0x7f7f, 0x7f80};
// OCP E4M3 ("FN"): no infinities, S.1111.111 is NaN, max 448.
constexpr NarrowFormat kE4M3{4, 3, false, true, 0x7f, 0x7e, 0};
constexpr NarrowFormat kE5M2{5, 2, true, true, 0x7f, 0x7b, 0x7c};

int Bias(const NarrowFormat& f) { return (1 << (f.ebits - 1)) - 1; }

double DecodeNarrow(const NarrowFormat& f, uint32_t bits) {
  const uint32_t mant_mask = (1u << f.mbits) - 1;
  const uint32_t exp_mask = (1u << f.ebits) - 1;
  const bool negative = (bits >> (f.ebits + f.mbits)) & 1;
  const uint32_t exp = (bits >> f.mbits) & exp_mask;
  const uint32_t mant = bits & mant_mask;
  double value;
  if (f.has_inf && exp == exp_mask) {
    value = mant == 0 ? std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.has_inf && exp == exp_mask && mant == mant_mask) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - Bias(f) - f.mbits);
  } else {
    value = std::ldexp(static_cast<double>(mant | (1u << f.mbits)),
                       static_cast<int>(exp) - Bias(f) - f.mbits);
  }
  return negative ? -value : value;
}

uint32_t EncodeNarrow(const NarrowFormat& f, double v) {
  if (std::isnan(v)) return f.nan_bits;
  const uint32_t sign = std::signbit(v) ? 1u << (f.ebits + f.mbits) : 0;
  const double a = std::fabs(v);
  const uint32_t overflow = f.saturate ? f.max_bits : f.inf_bits;
  if (std::isinf(a)) return sign | overflow;
  if (a == 0) return sign;
  const int emin = 1 - Bias(f);  // exponent of the smallest normal
  int e;
  std::frexp(a, &e);
  e -= 1;  // a in [2^e, 2^(e+1))
  // Count of quanta (the spacing of values near a), rounded to nearest even
  // by the default rounding mode; exact since the scale is a power of two.
  const int quantum_exp = std::max(e, emin) - f.mbits;
  const double quanta = std::nearbyint(std::ldexp(a, -quantum_exp));
  const double rounded = std::ldexp(quanta, quantum_exp);
  if (rounded > DecodeNarrow(f, f.max_bits)) return sign | overflow;
  if (quanta == 0) return sign;
  int re;
  std::frexp(rounded, &re);
  re -= 1;
  if (re < emin) {  // subnormal: exponent field 0
    return sign | static_cast<uint32_t>(quanta);
  }
  const uint32_t mant =
      static_cast<uint32_t>(std::ldexp(rounded, f.mbits - re)) -
      (1u << f.mbits);
  return sign | (static_cast<uint32_t>(re + Bias(f)) << f.mbits) | mant;
}

// Decoding tables for the 8- and 16-bit float kinds (built once).
template <int kBits>
struct DecodeTable {
  explicit DecodeTable(const NarrowFormat& f) {
    for (uint32_t i = 0; i < values.size(); ++i) values[i] = DecodeNarrow(f, i);
  }
  std::array<double, (1u << kBits)> values;
};

const DecodeTable<16>& F16Table() {
  static const auto* table = new DecodeTable<16>(kF16);
  return *table;
}
const DecodeTable<8>& E4M3Table() {
  static const auto* table = new DecodeTable<8>(kE4M3);
  return *table;
}
const DecodeTable<8>& E5M2Table() {
  static const auto* table = new DecodeTable<8>(kE5M2);
  return *table;
}

template <typename T>
T ReadAs(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void WriteAs(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

uint64_t EncodeFloat(DataType t, double v) {
  switch (t) {
    case DataType::kF16:
      return EncodeNarrow(kF16, v);
    case DataType::kBF16:
      return EncodeNarrow(kBF16, v);
    case DataType::kF8E4M3:
      return EncodeNarrow(kE4M3, v);
    case DataType::kF8E5M2:
      return EncodeNarrow(kE5M2, v);
    case DataType::kF32:
      return std::bit_cast<uint32_t>(static_cast<float>(v));
    case DataType::kF64:
      return std::bit_cast<uint64_t>(v);
    default:
      break;
  }
  std::abort();  // a bug of ours: callers pass float dtypes only
}

double DecodeFloat(DataType t, uint64_t bits) {
  switch (t) {
    case DataType::kF16:
      return F16Table().values[bits & 0xffff];
    case DataType::kBF16:
      return std::bit_cast<float>(static_cast<uint32_t>(bits & 0xffff) << 16);
    case DataType::kF8E4M3:
      return E4M3Table().values[bits & 0xff];
    case DataType::kF8E5M2:
      return E5M2Table().values[bits & 0xff];
    case DataType::kF32:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case DataType::kF64:
      return std::bit_cast<double>(bits);
    default:
      break;
  }
  std::abort();
}

double RoundToDtype(DataType t, double v) {
  switch (t) {
    case DataType::kF64:
      return v;
    case DataType::kF32:
      return static_cast<float>(v);
    default:
      return DecodeFloat(t, EncodeFloat(t, v));
  }
}

double LoadElement(DataType t, const std::byte* p) {
  switch (t) {
    case DataType::kF16:
    case DataType::kBF16:
      return DecodeFloat(t, ReadAs<uint16_t>(p));
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return DecodeFloat(t, ReadAs<uint8_t>(p));
    case DataType::kF32:
      return ReadAs<float>(p);
    case DataType::kF64:
      return ReadAs<double>(p);
    default:
      return static_cast<double>(LoadElementInt(t, p));
  }
}

int64_t LoadElementInt(DataType t, const std::byte* p) {
  switch (t) {
    case DataType::kBool:
      return ReadAs<uint8_t>(p) != 0;
    case DataType::kI8:
      return ReadAs<int8_t>(p);
    case DataType::kU8:
      return ReadAs<uint8_t>(p);
    case DataType::kI16:
      return ReadAs<int16_t>(p);
    case DataType::kI32:
      return ReadAs<int32_t>(p);
    case DataType::kU32:
      return ReadAs<uint32_t>(p);
    case DataType::kI64:
      return ReadAs<int64_t>(p);
    default:
      return FloatToInt(DataType::kI64, LoadElement(t, p));
  }
}

void StoreElement(DataType t, std::byte* p, double v) {
  switch (t) {
    case DataType::kF16:
    case DataType::kBF16:
      WriteAs<uint16_t>(p, static_cast<uint16_t>(EncodeFloat(t, v)));
      return;
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      WriteAs<uint8_t>(p, static_cast<uint8_t>(EncodeFloat(t, v)));
      return;
    case DataType::kF32:
      WriteAs<float>(p, static_cast<float>(v));
      return;
    case DataType::kF64:
      WriteAs<double>(p, v);
      return;
    default:
      StoreElementInt(t, p, FloatToInt(t, v));
      return;
  }
}

void StoreElementInt(DataType t, std::byte* p, int64_t v) {
  switch (t) {
    case DataType::kBool:
      WriteAs<uint8_t>(p, v != 0);
      return;
    case DataType::kI8:
    case DataType::kU8:
      WriteAs<uint8_t>(p, static_cast<uint8_t>(v));
      return;
    case DataType::kI16:
      WriteAs<uint16_t>(p, static_cast<uint16_t>(v));
      return;
    case DataType::kI32:
    case DataType::kU32:
      WriteAs<uint32_t>(p, static_cast<uint32_t>(v));
      return;
    case DataType::kI64:
      WriteAs<int64_t>(p, v);
      return;
    default:
      StoreElement(t, p, static_cast<double>(v));
      return;
  }
}

}  // namespace tessel::interp
