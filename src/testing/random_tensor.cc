// Seeded random tensors that never hold a zero: a kernel that forgets to
// write an element, or reads the wrong one, cannot hide behind zeros.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tessel/testing.h"

namespace tessel::testing {
namespace {

// A double in [0, 1) from 53 random bits: the same on every platform
// (std::uniform_real_distribution is not specified bit for bit).
double Unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// The two pieces [low, high] less (-min_abs, min_abs) falls into.
struct Segments {
  double neg_low, neg_high, pos_low, pos_high;
  bool has_neg, has_pos;
};

Segments Split(double low, double high, double min_abs) {
  Segments s;
  s.neg_low = low;
  s.neg_high = std::min(high, -min_abs);
  s.pos_low = std::max(low, min_abs);
  s.pos_high = high;
  s.has_neg = s.neg_low <= s.neg_high;
  s.has_pos = s.pos_low <= s.pos_high;
  return s;
}

double DrawFloat(std::mt19937_64& rng, const Segments& s) {
  const double neg = s.has_neg ? s.neg_high - s.neg_low : 0;
  const double pos = s.has_pos ? s.pos_high - s.pos_low : 0;
  bool take_neg = s.has_neg && !s.has_pos;
  if (s.has_neg && s.has_pos) {
    take_neg = neg + pos > 0 ? Unit(rng) * (neg + pos) < neg : Unit(rng) < 0.5;
  }
  return take_neg ? s.neg_low + Unit(rng) * neg : s.pos_low + Unit(rng) * pos;
}

// Integer limits of an integer dtype, clipped to what a double holds exactly.
std::pair<double, double> IntRange(DataType dtype) {
  const int bits = dtype_bits(dtype);
  if (is_unsigned_int(dtype)) return {0, std::ldexp(1.0, bits) - 1};
  const int magnitude_bits = std::min(bits - 1, 53);
  return {-std::ldexp(1.0, magnitude_bits),
          std::ldexp(1.0, magnitude_bits) - 1};
}

absl::Status CheckOptions(const RandomOptions& o) {
  if (!std::isfinite(o.low) || !std::isfinite(o.high) || o.low > o.high) {
    return absl::InvalidArgumentError(
        absl::StrCat("RandomTensor: need finite low <= high, got [", o.low,
                     ", ", o.high, "]"));
  }
  if (!std::isfinite(o.min_abs) || o.min_abs < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RandomTensor: min_abs must be finite and >= 0, got ", o.min_abs));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HostTensor> RandomTensor(DataType dtype,
                                        std::vector<int64_t> shape,
                                        uint64_t seed,
                                        const RandomOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  if (is_bool(dtype)) {
    return absl::InvalidArgumentError(
        "RandomTensor: bool tensors cannot avoid zeros (false); build masks "
        "by hand");
  }
  absl::StatusOr<HostTensor> created =
      HostTensor::Create(dtype, std::move(shape));
  if (!created.ok()) return created.status();
  HostTensor tensor = *std::move(created);
  std::mt19937_64 rng(seed);
  const std::string range =
      absl::StrCat("[", options.low, ", ", options.high, "] without (-",
                   options.min_abs, ", ", options.min_abs, ")");

  if (is_int(dtype)) {
    const auto [type_low, type_high] = IntRange(dtype);
    const double low = std::max(std::ceil(options.low), type_low);
    const double high = std::min(std::floor(options.high), type_high);
    const double min_abs = std::max(1.0, std::ceil(options.min_abs));
    const Segments s = Split(low, high, min_abs);
    const double negatives = s.has_neg ? s.neg_high - s.neg_low + 1 : 0;
    const double positives = s.has_pos ? s.pos_high - s.pos_low + 1 : 0;
    if (negatives + positives < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RandomTensor: no nonzero ", std::string(dtype_name(dtype)),
          " value lies in ", range));
    }
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      const double pick =
          std::floor(Unit(rng) * (negatives + positives));  // an index
      const double value =
          pick < negatives ? s.neg_low + pick : s.pos_low + (pick - negatives);
      tensor.set_flat_int(i, static_cast<int64_t>(value));
    }
    return tensor;
  }

  const Segments s = Split(options.low, options.high, options.min_abs);
  if (!s.has_neg && !s.has_pos) {
    return absl::InvalidArgumentError(
        absl::StrCat("RandomTensor: no value lies in ", range));
  }
  constexpr int kAttempts = 64;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    int attempt = 0;
    do {
      if (++attempt > kAttempts) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RandomTensor: values drawn from ", range, " round to zero in ",
            std::string(dtype_name(dtype)), "; raise min_abs"));
      }
      tensor.set_flat(i, DrawFloat(rng, s));
    } while (tensor.get_flat(i) == 0);
  }
  return tensor;
}

absl::StatusOr<std::vector<float>> RandomFloats(int64_t count, uint64_t seed,
                                                const RandomOptions& options) {
  absl::StatusOr<HostTensor> t = RandomTensor(f32, {count}, seed, options);
  if (!t.ok()) return t.status();
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    out[i] = static_cast<float>(t->get_flat(i));
  }
  return out;
}

}  // namespace tessel::testing
