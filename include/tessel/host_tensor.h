// A tensor in host memory that owns its bytes: the argument type of the CPU
// interpreter (tessel::interpret) and a staging type for device tensors.
//
// clang-format off
//   tessel::HostTensor a(tessel::f16, {256, 128});   // zero-filled
//   a.set({3, 4}, 1.5);                              // rounds to f16
//   double x = a.at({3, 4});                         // aborts when out of range
//   absl::StatusOr<double> y = a.checked_at({i, j}); // OutOfRange instead
//   std::vector<double> all = a.to_doubles();
//   auto b = tessel::HostTensor::FromDoubles(tessel::bf16, {2, 2}, {1, 2, 3, 4});
// clang-format on
//
// Elements are stored row-major (last index fastest) in the dtype's own bit
// format, exactly the bytes a GPU tensor of that dtype holds. Writing a value
// rounds it as the hardware does (round to nearest even; fp8 saturates).
// A shape with a negative dimension (or too many elements) makes a tensor
// whose status() says so; every tessel entry point rejects it.
#ifndef TESSEL_HOST_TENSOR_H_
#define TESSEL_HOST_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/dtype.h"

namespace tessel {

class HostTensor {
 public:
  HostTensor() = default;  // an empty f32 tensor of shape {0}
  HostTensor(const HostTensor&) = default;
  HostTensor& operator=(const HostTensor&) = default;
  // A moved-from tensor is the empty one above (its shape and element count
  // stay consistent with its bytes).
  HostTensor(HostTensor&& other) noexcept;
  HostTensor& operator=(HostTensor&& other) noexcept;
  HostTensor(DataType dtype, std::vector<int64_t> shape);

  // Checked construction from untrusted shapes / values; values.size() must
  // equal the element count.
  static absl::StatusOr<HostTensor> Create(DataType dtype,
                                           std::vector<int64_t> shape);
  static absl::StatusOr<HostTensor> FromDoubles(DataType dtype,
                                                std::vector<int64_t> shape,
                                                std::span<const double> values);

  // OK unless the shape was invalid.
  const absl::Status& status() const { return status_; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return bytes_.size(); }
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }

  // Element access by flat (row-major) index or by one index per dimension.
  // Indices must be in range (checked; a bad one aborts: it is a bug in the
  // calling code, like std::vector::at without exceptions). For an index
  // that may be bad (user input), checked_at / checked_set below.
  double get_flat(int64_t i) const;
  void set_flat(int64_t i, double value);
  double at(std::initializer_list<int64_t> index) const;
  void set(std::initializer_list<int64_t> index, double value);
  // The same with the index checked into a Status: OutOfRange naming the
  // index and the tensor's type, nothing read or written.
  absl::StatusOr<double> checked_at(std::initializer_list<int64_t> index) const;
  absl::Status checked_set(std::initializer_list<int64_t> index, double value);
  // Integer dtypes without a round trip through double (i64 beyond 2^53).
  int64_t get_flat_int(int64_t i) const;
  void set_flat_int(int64_t i, int64_t value);

  void fill(double value);
  std::vector<double> to_doubles() const;
  // "f16[256, 128]"
  std::string type_string() const;

 private:
  int64_t FlatIndex(std::initializer_list<int64_t> index) const;
  absl::StatusOr<int64_t> CheckedFlatIndex(
      std::initializer_list<int64_t> index) const;
  std::byte* ElementPtr(int64_t i);
  const std::byte* ElementPtr(int64_t i) const;

  DataType dtype_ = DataType::kF32;
  std::vector<int64_t> shape_ = {0};
  int64_t num_elements_ = 0;
  std::vector<std::byte> bytes_;
  absl::Status status_;
};

}  // namespace tessel

#endif  // TESSEL_HOST_TENSOR_H_
