// AllClose / ExpectAllClose: element-wise comparison with a report a person
// can act on (how many, which, by how much).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tessel/testing.h"

namespace tessel::testing {
namespace {

// One side of a comparison: a description ("f16[64, 32]") and element reads.
struct Side {
  std::string description;
  std::function<double(int64_t)> get;
};

struct Mismatch {
  double badness;  // |diff| / allowed; infinite for NaN or allowed == 0
  int64_t flat;
  double actual;
  double reference;
  double diff;
  double allowed;
};

// Orders a min-heap by badness, so the heap's top is the mildest kept.
struct MilderFirst {
  bool operator()(const Mismatch& a, const Mismatch& b) const {
    if (a.badness != b.badness) return a.badness > b.badness;
    if (a.diff != b.diff) return a.diff > b.diff;
    return a.flat < b.flat;  // keep the earlier of equals
  }
};

std::string IndexString(int64_t flat, const std::vector<int64_t>& shape) {
  if (shape.empty()) return "[]";
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t extent = std::max<int64_t>(shape[d], 1);
    index[d] = flat % extent;
    flat /= extent;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

std::string Number(double x) { return absl::StrFormat("%.6g", x); }

::testing::AssertionResult Compare(const Side& actual, const Side& reference,
                                   const std::vector<int64_t>& shape,
                                   int64_t count, double rtol, double atol,
                                   int worst_reported) {
  if (!(rtol >= 0) || !(atol >= 0)) {
    return ::testing::AssertionFailure()
           << "AllClose: rtol and atol must be >= 0, got rtol=" << rtol
           << " atol=" << atol;
  }
  std::priority_queue<Mismatch, std::vector<Mismatch>, MilderFirst> worst;
  int64_t mismatches = 0;
  int64_t nans = 0;
  double max_abs_error = 0;
  int64_t max_abs_error_at = -1;
  for (int64_t i = 0; i < count; ++i) {
    const double a = actual.get(i);
    const double r = reference.get(i);
    const double allowed = atol + rtol * std::abs(r);
    double diff;
    bool close;
    if (std::isnan(a) || std::isnan(r)) {
      diff = std::numeric_limits<double>::quiet_NaN();
      close = false;
      ++nans;
    } else if (std::isinf(a) || std::isinf(r)) {
      close = a == r;
      diff = close ? 0 : std::numeric_limits<double>::infinity();
    } else {
      diff = std::abs(a - r);
      close = diff <= allowed;
    }
    if (!std::isnan(diff) && diff > max_abs_error) {
      max_abs_error = diff;
      max_abs_error_at = i;
    }
    if (close) continue;
    ++mismatches;
    const double badness = std::isnan(diff) || allowed == 0
                               ? std::numeric_limits<double>::infinity()
                               : diff / allowed;
    worst.push({badness, i, a, r, diff, allowed});
    if (static_cast<int>(worst.size()) > std::max(worst_reported, 0)) {
      worst.pop();
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();

  std::vector<Mismatch> listed;
  while (!worst.empty()) {
    listed.push_back(worst.top());
    worst.pop();
  }
  std::reverse(listed.begin(), listed.end());  // worst first
  std::string report = absl::StrFormat(
      "%d of %d elements (%.3g%%) are not close: |actual - reference| > "
      "atol + rtol * |reference| (atol=%g, rtol=%g); actual %s, reference %s",
      mismatches, count, 100.0 * static_cast<double>(mismatches) / count, atol,
      rtol, actual.description, reference.description);
  if (max_abs_error_at >= 0) {
    absl::StrAppend(&report, "; max abs error ", Number(max_abs_error), " at ",
                    IndexString(max_abs_error_at, shape));
  }
  if (nans > 0) absl::StrAppend(&report, "; ", nans, " NaN");
  absl::StrAppend(&report, "\nworst ", listed.size(), ":");
  for (const Mismatch& m : listed) {
    absl::StrAppend(&report, "\n  ", IndexString(m.flat, shape), ": actual ",
                    Number(m.actual), ", reference ", Number(m.reference),
                    ", |diff| ", Number(m.diff), " > allowed ",
                    Number(m.allowed));
  }
  return ::testing::AssertionFailure() << report;
}

std::string ShapeString(const char* dtype, std::span<const int64_t> shape) {
  return absl::StrCat(dtype, "[", absl::StrJoin(shape, ", "), "]");
}

template <typename T>
::testing::AssertionResult CompareSpans(std::span<const T> actual,
                                        std::span<const T> reference,
                                        std::span<const int64_t> shape,
                                        double rtol, double atol,
                                        int worst_reported, const char* dtype) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return ::testing::AssertionFailure()
             << "AllClose: negative dimension in shape "
             << ShapeString(dtype, shape);
    }
    count *= d;
  }
  if (static_cast<int64_t>(actual.size()) != count ||
      static_cast<int64_t>(reference.size()) != count) {
    return ::testing::AssertionFailure()
           << "AllClose: shape " << ShapeString(dtype, shape) << " has "
           << count << " elements, but actual has " << actual.size()
           << " and reference " << reference.size();
  }
  const std::string description = ShapeString(dtype, shape);
  return Compare(
      {description, [&](int64_t i) { return static_cast<double>(actual[i]); }},
      {description,
       [&](int64_t i) { return static_cast<double>(reference[i]); }},
      std::vector<int64_t>(shape.begin(), shape.end()), count, rtol, atol,
      worst_reported);
}

}  // namespace

::testing::AssertionResult AllClose(const HostTensor& actual,
                                    const HostTensor& reference, double rtol,
                                    double atol, int worst_reported) {
  if (!actual.status().ok()) {
    return ::testing::AssertionFailure()
           << "AllClose: actual is invalid: " << actual.status();
  }
  if (!reference.status().ok()) {
    return ::testing::AssertionFailure()
           << "AllClose: reference is invalid: " << reference.status();
  }
  if (actual.shape() != reference.shape()) {
    return ::testing::AssertionFailure()
           << "AllClose: shapes differ: actual " << actual.type_string()
           << ", reference " << reference.type_string();
  }
  return Compare(
      {actual.type_string(), [&](int64_t i) { return actual.get_flat(i); }},
      {reference.type_string(),
       [&](int64_t i) { return reference.get_flat(i); }},
      actual.shape(), actual.num_elements(), rtol, atol, worst_reported);
}

::testing::AssertionResult AllClose(std::span<const float> actual,
                                    std::span<const float> reference,
                                    std::span<const int64_t> shape, double rtol,
                                    double atol, int worst_reported) {
  return CompareSpans(actual, reference, shape, rtol, atol, worst_reported,
                      "f32");
}

::testing::AssertionResult AllClose(std::span<const double> actual,
                                    std::span<const double> reference,
                                    std::span<const int64_t> shape, double rtol,
                                    double atol, int worst_reported) {
  return CompareSpans(actual, reference, shape, rtol, atol, worst_reported,
                      "f64");
}

void ExpectAllClose(const HostTensor& actual, const HostTensor& reference,
                    double rtol, double atol, std::source_location where) {
  if (::testing::AssertionResult r = AllClose(actual, reference, rtol, atol);
      !r) {
    ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line()))
        << r.message();
  }
}

void ExpectAllClose(std::span<const float> actual,
                    std::span<const float> reference,
                    std::span<const int64_t> shape, double rtol, double atol,
                    std::source_location where) {
  if (::testing::AssertionResult r =
          AllClose(actual, reference, shape, rtol, atol);
      !r) {
    ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line()))
        << r.message();
  }
}

}  // namespace tessel::testing
