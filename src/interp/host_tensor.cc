#include "tessel/host_tensor.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/numeric.h"

namespace tessel {
namespace {

// Element count of a shape, or an error for negative or huge shapes.
absl::StatusOr<int64_t> CountElements(DataType dtype,
                                      const std::vector<int64_t>& shape) {
  if (!dtype_valid(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("HostTensor: dtype value ", static_cast<int>(dtype),
                     " is not a tessel::DataType"));
  }
  int64_t n = 1;
  const int64_t limit =
      std::numeric_limits<int64_t>::max() / 8 / (dtype_bytes(dtype) + 1);
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("HostTensor: negative dimension ", d, " in shape [",
                       absl::StrJoin(shape, ", "), "]"));
    }
    if (d != 0 && n > limit / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("HostTensor: shape [", absl::StrJoin(shape, ", "),
                       "] has too many elements"));
    }
    n *= d;
  }
  return n;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "tessel::HostTensor: %s\n", message.c_str());
  std::abort();
}

}  // namespace

HostTensor::HostTensor(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  absl::StatusOr<int64_t> n = CountElements(dtype_, shape_);
  if (!n.ok()) {
    status_ = n.status();
    return;
  }
  num_elements_ = *n;
  bytes_.assign(static_cast<size_t>(num_elements_) * dtype_bytes(dtype_),
                std::byte{0});
}

absl::StatusOr<HostTensor> HostTensor::Create(DataType dtype,
                                              std::vector<int64_t> shape) {
  HostTensor t(dtype, std::move(shape));
  if (!t.status().ok()) return t.status();
  return t;
}

absl::StatusOr<HostTensor> HostTensor::FromDoubles(
    DataType dtype, std::vector<int64_t> shape,
    std::span<const double> values) {
  HostTensor t(dtype, std::move(shape));
  if (!t.status().ok()) return t.status();
  if (static_cast<int64_t>(values.size()) != t.num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("HostTensor::FromDoubles: ", values.size(), " values for ",
                     t.type_string(), " (", t.num_elements(), " elements)"));
  }
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_flat(i, values[i]);
  return t;
}

HostTensor::HostTensor(HostTensor&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      num_elements_(other.num_elements_),
      bytes_(std::move(other.bytes_)),
      status_(std::move(other.status_)) {
  other = HostTensor();
}

HostTensor& HostTensor::operator=(HostTensor&& other) noexcept {
  if (this == &other) return *this;
  dtype_ = other.dtype_;
  shape_ = std::move(other.shape_);
  num_elements_ = other.num_elements_;
  bytes_ = std::move(other.bytes_);
  status_ = std::move(other.status_);
  other.dtype_ = DataType::kF32;
  other.shape_ = {0};
  other.num_elements_ = 0;
  other.bytes_.clear();
  other.status_ = absl::OkStatus();
  return *this;
}

std::byte* HostTensor::ElementPtr(int64_t i) {
  if (i < 0 || i >= num_elements_) {
    Die(absl::StrCat("flat index ", i, " out of range for ", type_string()));
  }
  return bytes_.data() + i * dtype_bytes(dtype_);
}

const std::byte* HostTensor::ElementPtr(int64_t i) const {
  return const_cast<HostTensor*>(this)->ElementPtr(i);
}

absl::StatusOr<int64_t> HostTensor::CheckedFlatIndex(
    std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != rank()) {
    return absl::OutOfRangeError(
        absl::StrCat(index.size(), " indices for ", type_string()));
  }
  int64_t flat = 0;
  int d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[d]) {
      return absl::OutOfRangeError(absl::StrCat("index ", i,
                                                " out of range in dimension ",
                                                d, " of ", type_string()));
    }
    flat = flat * shape_[d] + i;
    ++d;
  }
  return flat;
}

int64_t HostTensor::FlatIndex(std::initializer_list<int64_t> index) const {
  absl::StatusOr<int64_t> flat = CheckedFlatIndex(index);
  if (!flat.ok()) Die(std::string(flat.status().message()));
  return *flat;
}

absl::StatusOr<double> HostTensor::checked_at(
    std::initializer_list<int64_t> index) const {
  absl::StatusOr<int64_t> flat = CheckedFlatIndex(index);
  if (!flat.ok()) return flat.status();
  return get_flat(*flat);
}

absl::Status HostTensor::checked_set(std::initializer_list<int64_t> index,
                                     double value) {
  absl::StatusOr<int64_t> flat = CheckedFlatIndex(index);
  if (!flat.ok()) return flat.status();
  set_flat(*flat, value);
  return absl::OkStatus();
}

double HostTensor::get_flat(int64_t i) const {
  return interp::LoadElement(dtype_, ElementPtr(i));
}

void HostTensor::set_flat(int64_t i, double value) {
  interp::StoreElement(dtype_, ElementPtr(i), value);
}

int64_t HostTensor::get_flat_int(int64_t i) const {
  return interp::LoadElementInt(dtype_, ElementPtr(i));
}

void HostTensor::set_flat_int(int64_t i, int64_t value) {
  interp::StoreElementInt(dtype_, ElementPtr(i), value);
}

double HostTensor::at(std::initializer_list<int64_t> index) const {
  return get_flat(FlatIndex(index));
}

void HostTensor::set(std::initializer_list<int64_t> index, double value) {
  set_flat(FlatIndex(index), value);
}

void HostTensor::fill(double value) {
  for (int64_t i = 0; i < num_elements_; ++i) set_flat(i, value);
}

std::vector<double> HostTensor::to_doubles() const {
  std::vector<double> out(num_elements_);
  for (int64_t i = 0; i < num_elements_; ++i) out[i] = get_flat(i);
  return out;
}

std::string HostTensor::type_string() const {
  return absl::StrCat(std::string(dtype_name(dtype_)), "[",
                      absl::StrJoin(shape_, ", "), "]");
}

}  // namespace tessel
