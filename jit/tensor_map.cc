#include "jit/tensor_map.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/driver_api.h"

namespace tessel::jit {
namespace {

constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kMaxStride = uint64_t{1} << 40;
constexpr uint32_t kMaxBox = 256;

std::string Describe(const TensorMapSpec& s) {
  return absl::StrCat("tensor map (dims [", absl::StrJoin(s.dims, ", "),
                      "], strides [", absl::StrJoin(s.strides, ", "),
                      "] bytes, box [", absl::StrJoin(s.box, ", "), "])");
}

CUtensorMapSwizzle ToDriver(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::k32B:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case TmaSwizzle::k64B:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case TmaSwizzle::k128B:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    case TmaSwizzle::kNone:
      break;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

int TensorMapElementBytes(CUtensorMapDataType dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
      return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
      return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

absl::Status ValidateTensorMap(const TensorMapSpec& s, CUdeviceptr base) {
  const size_t rank = s.dims.size();
  auto bad = [&](auto&&... why) {
    return absl::InvalidArgumentError(absl::StrCat(Describe(s), ": ", why...));
  };
  const int elem = TensorMapElementBytes(s.dtype);
  if (elem == 0) {
    return bad("element type ", static_cast<int>(s.dtype),
               " has no TMA mapping in tessel");
  }
  if (rank < 1 || rank > 5) return bad("rank ", rank, " is not in [1, 5]");
  if (s.box.size() != rank) {
    return bad("the box has ", s.box.size(), " extents for rank ", rank);
  }
  if (s.strides.size() != rank - 1) {
    return bad(s.strides.size(), " strides given; rank ", rank, " needs ",
               rank - 1);
  }
  if (base % 16 != 0) {
    return bad("the base address 0x", absl::Hex(base),
               " is not 16-byte aligned");
  }
  for (size_t i = 0; i < rank; ++i) {
    if (s.dims[i] < 1 || s.dims[i] > kMaxDim) {
      return bad("dim ", i, " = ", s.dims[i], " is not in [1, 2^32]");
    }
    if (s.box[i] < 1 || s.box[i] > kMaxBox) {
      return bad("box extent ", i, " = ", s.box[i], " is not in [1, 256]");
    }
  }
  // The extent (bytes) that dimension i spans, which stride i must clear.
  uint64_t below = s.dims[0] * static_cast<uint64_t>(elem);
  for (size_t i = 1; i < rank; ++i) {
    const uint64_t stride = s.strides[i - 1];
    if (stride % 16 != 0 || stride >= kMaxStride) {
      return bad("stride of dim ", i, " = ", stride,
                 " bytes is not a multiple of 16 below 2^40 (TMA needs "
                 "16-byte aligned rows)");
    }
    if (stride < below) {
      return bad("stride of dim ", i, " = ", stride, " bytes overlaps the ",
                 below, " bytes of the dims below");
    }
    below = stride * s.dims[i];
  }
  const uint64_t row_bytes = uint64_t{s.box[0]} * elem;
  if (row_bytes % 16 != 0) {
    return bad("the box's innermost row is ", row_bytes,
               " bytes, not a multiple of 16");
  }
  const uint32_t span = static_cast<uint32_t>(s.swizzle);
  if (span != 0 && row_bytes > span) {
    return bad("the box's innermost row is ", row_bytes,
               " bytes, wider than its ", span, "-byte swizzle");
  }
  return absl::OkStatus();
}

absl::StatusOr<CUtensorMap> EncodeTensorMap(const TensorMapSpec& s,
                                            CUdeviceptr base) {
  if (absl::Status valid = ValidateTensorMap(s, base); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  if ((*api)->cuTensorMapEncodeTiled == nullptr) {
    return absl::UnavailableError(
        "the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 "
        "or newer driver)");
  }
  const size_t rank = s.dims.size();
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = s.dims[i];
    box[i] = s.box[i];
    element_strides[i] = 1;
    if (i > 0) strides[i - 1] = s.strides[i - 1];
  }
  CUtensorMap map;
  const CUresult r = (*api)->cuTensorMapEncodeTiled(
      &map, s.dtype, static_cast<cuuint32_t>(rank),
      reinterpret_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, ToDriver(s.swizzle),
      s.l2_promote_256b ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                        : CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (absl::Status st = CuResultToStatus(**api, r, "cuTensorMapEncodeTiled");
      !st.ok()) {
    return absl::Status(st.code(),
                        absl::StrCat(Describe(s), ": ", st.message()));
  }
  return map;
}

absl::StatusOr<CUtensorMap> TensorMapCache::Get(const TensorMapSpec& spec,
                                                CUdeviceptr base) {
  Key key{base, spec};
  {
    absl::MutexLock lock(&mu_);
    if (auto it = maps_.find(key); it != maps_.end()) return it->second;
  }
  absl::StatusOr<CUtensorMap> map = EncodeTensorMap(spec, base);
  if (!map.ok()) return map.status();
  absl::MutexLock lock(&mu_);
  if (maps_.size() >= max_entries_) maps_.clear();
  maps_.emplace(std::move(key), *map);
  return map;
}

size_t TensorMapCache::size() const {
  absl::MutexLock lock(&mu_);
  return maps_.size();
}

TensorMapCache& TensorMapCache::Global() {
  static auto* cache = new TensorMapCache();
  return *cache;
}

}  // namespace tessel::jit
