#include "src/runtime/tensor_maps.h"

#include "absl/strings/str_cat.h"
#include "jit/tensor_map.h"

namespace tessel::runtime {
namespace {

// The map's element type: the TMA moves bytes, so types without a CUDA
// enumerator of their own (fp8) travel as bytes of their size.
absl::StatusOr<CUtensorMapDataType> MapType(DataType t) {
  switch (t) {
    case DataType::kF16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DataType::kBF16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DataType::kF32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DataType::kF64:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DataType::kI32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DataType::kU32:
      return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DataType::kI64:
      return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DataType::kI16:
      return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DataType::kI8:
    case DataType::kU8:
    case DataType::kBool:
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return absl::InvalidArgumentError("no TMA element type");
}

}  // namespace

absl::StatusOr<jit::TensorMapSpec> TensorMapSpecFor(
    const passes::TensorMapParam& m, const TensorView& t) {
  absl::StatusOr<CUtensorMapDataType> type = MapType(t.dtype);
  if (!type.ok()) return type.status();
  if (m.box.size() != t.shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat("a rank-", m.box.size(),
                                                   " TMA box for a rank-",
                                                   t.shape.size(), " tensor"));
  }
  jit::TensorMapSpec spec;
  spec.dtype = *type;
  const int rank = static_cast<int>(t.shape.size());
  const uint64_t eb = dtype_bytes(t.dtype);
  uint64_t stride = eb;  // bytes; row-major unless the view says otherwise
  for (int d = rank - 1; d >= 0; --d) {
    // A strided view (its innermost stride is 1: the TMA plan refuses
    // others) gives its own; a dimension of extent 1 keeps the row-major
    // one, which is never stepped and cannot overlap.
    if (!t.strides.empty() && d < rank - 1 && t.shape[d] != 1)
      stride = static_cast<uint64_t>(t.strides[d]) * eb;
    spec.dims.push_back(static_cast<uint64_t>(t.shape[d]));
    spec.box.push_back(static_cast<uint32_t>(m.box[d]));
    if (d < rank - 1) spec.strides.push_back(stride);
    stride *= static_cast<uint64_t>(t.shape[d]);
  }
  spec.swizzle = static_cast<jit::TmaSwizzle>(m.swizzle_bytes);
  return spec;
}

absl::Status AddTensorMaps(const KernelImpl& k,
                           const std::vector<TensorView>& tensors,
                           jit::KernelArgs& args) {
  for (const passes::TensorMapParam& m : k.tensor_maps) {
    const TensorView& t = tensors[m.param];
    absl::StatusOr<jit::TensorMapSpec> spec = TensorMapSpecFor(m, t);
    absl::StatusOr<CUtensorMap> map =
        spec.ok() ? jit::TensorMapCache::Global().Get(*spec, t.data)
                  : absl::StatusOr<CUtensorMap>(spec.status());
    if (!map.ok()) {
      return absl::Status(
          map.status().code(),
          absl::StrCat(k.name, ": ", k.params[m.param]->name, " ", t.ToString(),
                       ": its TMA descriptor: ", map.status().message()));
    }
    args.AddBytes(&*map, sizeof(CUtensorMap));
  }
  return absl::OkStatus();
}

}  // namespace tessel::runtime
