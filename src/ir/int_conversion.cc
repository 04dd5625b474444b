#include "src/ir/int_conversion.h"

#include <cmath>

namespace tessel::ir {
namespace {

int64_t SaturatingTruncate(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  if (t <= lo) return static_cast<int64_t>(lo);
  if (t >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(t);
}

}  // namespace

int64_t WrapInt(DataType t, int64_t v) {
  switch (t) {
    case DataType::kBool:
      return v != 0;
    case DataType::kI8:
      return static_cast<int8_t>(v);
    case DataType::kU8:
      return static_cast<uint8_t>(v);
    case DataType::kI16:
      return static_cast<int16_t>(v);
    case DataType::kI32:
      return static_cast<int32_t>(v);
    case DataType::kU32:
      return static_cast<uint32_t>(v);
    default:
      return v;
  }
}

int64_t FloatToInt(DataType t, double v) {
  switch (t) {
    case DataType::kBool:
      return v != 0;
    case DataType::kI8:
      return SaturatingTruncate(v, INT8_MIN, INT8_MAX);
    case DataType::kU8:
      return SaturatingTruncate(v, 0, UINT8_MAX);
    case DataType::kI16:
      return SaturatingTruncate(v, INT16_MIN, INT16_MAX);
    case DataType::kI32:
      return SaturatingTruncate(v, INT32_MIN, INT32_MAX);
    case DataType::kU32:
      return SaturatingTruncate(v, 0, UINT32_MAX);
    default: {
      // i64: 2^63 is not representable as int64, so compare in double.
      if (std::isnan(v)) return 0;
      const double t64 = std::trunc(v);
      if (t64 >= 9223372036854775808.0) return INT64_MAX;
      if (t64 < -9223372036854775808.0) return INT64_MIN;
      return static_cast<int64_t>(t64);
    }
  }
}

}  // namespace tessel::ir
