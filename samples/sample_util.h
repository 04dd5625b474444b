// Small helpers shared by the samples' workloads and float64 references.
//
//   ParallelFor(rows, [&](int64_t i) { ... row i of the reference ... });
//   absl::StatusOr<HostTensor> q = RandomInput(tessel::f16, {B, S, H, D}, 7);
//   std::vector<double> v = q->to_doubles();
#ifndef TESSEL_SAMPLES_SAMPLE_UTIL_H_
#define TESSEL_SAMPLES_SAMPLE_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/host_tensor.h"

namespace tessel::samples {

// tessel::dtype_name as a std::string (absl::StrCat takes no
// std::string_view with Debian's Abseil).
inline std::string DtypeName(DataType t) { return std::string(dtype_name(t)); }

// Shared memory a block may use on sm_<sm> (Target::max_shared_bytes); 0
// for sm 0 (the CPU backend).
int MaxSharedBytes(int sm);

// Whether sm_<sm> has Hopper's 227 KB of shared memory a block (sm_90, the
// datacenter Blackwells), room for the samples' Hopper tiles (up to 192 KB).
// sm_120's 99 KB is not: it takes the tiles of sm_80 or smaller ones.
bool HopperSharedMemory(int sm);

// fn(0) ... fn(n - 1), spread over the hardware threads (each index once).
void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn);

// Seeded uniform values in [-1, 1] away from zero, rounded to dtype
// (tessel::testing::RandomTensor; tensors of over 2^20 elements are drawn
// in chunks of 2^20, each from its own seed, on every core).
absl::StatusOr<HostTensor> RandomInput(DataType dtype,
                                       std::vector<int64_t> shape,
                                       uint64_t seed, double scale = 1.0);

// A zero-filled tensor.
inline HostTensor Zeros(DataType dtype, std::vector<int64_t> shape) {
  return HostTensor(dtype, std::move(shape));
}

// An f64 tensor of the given values (values.size() == product of shape).
HostTensor F64Tensor(std::vector<int64_t> shape, std::vector<double> values);

// Elements of a shape.
int64_t NumElements(const std::vector<int64_t>& shape);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_SAMPLE_UTIL_H_
