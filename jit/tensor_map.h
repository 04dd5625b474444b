// TMA tensor maps: the 128-byte descriptors `cp.async.bulk.tensor` reads,
// encoded on the host (cuTensorMapEncodeTiled through the dlopen'd driver)
// and passed to a kernel by value as a `const __grid_constant__` parameter.
//
// clang-format off
//   TensorMapSpec spec{.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
//                      .dims = {K, M},          // innermost first
//                      .strides = {K * 2},      // bytes, of dims 1..rank-1
//                      .box = {64, 128},        // the tile one copy moves
//                      .swizzle = TmaSwizzle::k128B};
//   ASSIGN_OR_RETURN(CUtensorMap map, TensorMapCache::Global().Get(spec, a));
//   args.AddBytes(&map, sizeof(map));
// clang-format on
//
// Every hardware rule is checked on the host first (ValidateTensorMap), so a
// bad shape is an InvalidArgument naming the rule, not a driver error code.
// Boxes that reach past the tensor's edge are legal: loads fill the missing
// elements with zeros, stores drop them.
#ifndef TESSEL_JIT_TENSOR_MAP_H_
#define TESSEL_JIT_TENSOR_MAP_H_

#include <cuda.h>  // types only

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tessel::jit {

// Shared-memory swizzle of the box: the span (bytes) of the XOR pattern.
enum class TmaSwizzle : uint8_t {
  kNone = 0,
  k32B = 32,
  k64B = 64,
  k128B = 128
};

struct TensorMapSpec {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  std::vector<uint64_t> dims;     // elements per dimension, innermost first
  std::vector<uint64_t> strides;  // bytes between steps of dims 1..rank-1
  std::vector<uint32_t> box;      // elements per dimension of one copy
  TmaSwizzle swizzle = TmaSwizzle::kNone;
  // Promotes L2 fetches to 256-byte sectors (what GEMM tiles want).
  bool l2_promote_256b = true;

  friend bool operator==(const TensorMapSpec&, const TensorMapSpec&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TensorMapSpec& s) {
    return H::combine(std::move(h), static_cast<int>(s.dtype), s.dims,
                      s.strides, s.box, s.swizzle, s.l2_promote_256b);
  }
};

// Bytes of one element of `dtype`; 0 for types tessel does not map
// (sub-byte and packed formats).
int TensorMapElementBytes(CUtensorMapDataType dtype);

// Checks the rules cuTensorMapEncodeTiled and the copy engine impose: rank
// 1-5; a 16-byte aligned base; dims in [1, 2^32]; strides multiples of 16
// below 2^40 that do not overlap the dimension below; box extents in
// [1, 256] whose innermost row is a multiple of 16 bytes and, when
// swizzled, no wider than the swizzle span.
absl::Status ValidateTensorMap(const TensorMapSpec& spec, CUdeviceptr base);

// Validates, then encodes through the driver (Unavailable without one, or
// with a driver older than CUDA 12).
absl::StatusOr<CUtensorMap> EncodeTensorMap(const TensorMapSpec& spec,
                                            CUdeviceptr base);

// Encoded maps by (base, spec): a launch with the same tensors reuses its
// descriptors. Thread-safe; bounded (cleared when full, since an encode
// costs about a microsecond and a stale entry is never wrong: the encoding
// depends on nothing but its inputs).
class TensorMapCache {
 public:
  explicit TensorMapCache(size_t max_entries = 4096)
      : max_entries_(max_entries) {}

  absl::StatusOr<CUtensorMap> Get(const TensorMapSpec& spec, CUdeviceptr base);
  size_t size() const;

  static TensorMapCache& Global();

 private:
  struct Key {
    CUdeviceptr base;
    TensorMapSpec spec;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.base, k.spec);
    }
  };
  const size_t max_entries_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, CUtensorMap> maps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessel::jit

#endif  // TESSEL_JIT_TENSOR_MAP_H_
