// The launch functions' checks of the caller's tensors (shapes against the
// kernel's parameters, pointers, the alignment its copies need), the grid,
// and the TMA descriptors encoded for the tensors given.
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/aot_runtime/driver.h"
#include "tessel/aot_runtime.h"

namespace tessel::aot {
namespace {

constexpr int64_t kMaxGrid[3] = {2147483647, 65535, 65535};

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

std::string Got(const char* kernel, const char* tensor, const char* expected,
                const Tensor& t) {
  return std::string(kernel) + ": " + tensor + ": expected " + expected +
         ", got a tensor of shape " + t.ShapeString();
}

std::string Hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v % 16]);
    v /= 16;
  } while (v != 0);
  return "0x" + s;
}

}  // namespace

Tensor::Tensor(uint64_t ptr, std::initializer_list<int64_t> dims) : data(ptr) {
  // More dims than kMaxRank keep rank above it: CheckRank refuses them.
  rank = static_cast<int>(dims.size());
  int i = 0;
  for (int64_t d : dims) {
    if (i < kMaxRank) shape[i++] = d;
  }
}

std::string Tensor::ShapeString() const {
  std::string s = "[";
  for (int i = 0; i < rank && i < kMaxRank; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  if (rank > kMaxRank) s += ",...";
  return s + "]";
}

Status CheckRank(const char* kernel, const char* tensor, const char* expected,
                 const Tensor& t, int rank) {
  if (t.rank == rank) return Status();
  return Invalid(Got(kernel, tensor, expected, t) + " (rank " +
                 std::to_string(t.rank) + ", not " + std::to_string(rank) +
                 ")");
}

Status CheckDim(const char* kernel, const char* tensor, const char* expected,
                const Tensor& t, int dim, int64_t want) {
  if (t.shape[dim] == want) return Status();
  return Invalid(Got(kernel, tensor, expected, t) + " (dimension " +
                 std::to_string(dim) + " must be " + std::to_string(want) +
                 ")");
}

Status BindDim(const char* kernel, const char* tensor, const char* expected,
               const Tensor& t, int dim, const char* size_name,
               int64_t* value) {
  const int64_t n = t.shape[dim];
  if (n <= 0 || n > 2147483647) {
    return Invalid(Got(kernel, tensor, expected, t) + " (" + size_name +
                   " must be in [1, 2^31 - 1])");
  }
  if (*value != 0 && *value != n) {
    return Invalid(Got(kernel, tensor, expected, t) + " (" + size_name +
                   " is " + std::to_string(*value) +
                   " from an earlier tensor)");
  }
  *value = n;
  return Status();
}

Status CheckDimExpr(const char* kernel, const char* tensor,
                    const char* expected, const Tensor& t, int dim,
                    int64_t want, const char* text) {
  if (t.shape[dim] == want) return Status();
  return Invalid(Got(kernel, tensor, expected, t) + " (dimension " +
                 std::to_string(dim) + " is " + text + " = " +
                 std::to_string(want) + ")");
}

Status CheckPointer(const char* kernel, const char* tensor, const Tensor& t,
                    int element_bytes) {
  if (t.data == 0) {
    return Invalid(std::string(kernel) + ": " + tensor +
                   ": null device pointer");
  }
  if (t.data % static_cast<uint64_t>(element_bytes) != 0) {
    return Invalid(std::string(kernel) + ": " + tensor + ": address " +
                   Hex(t.data) + " is not a multiple of its " +
                   std::to_string(element_bytes) + "-byte element");
  }
  return Status();
}

Status CheckAlignment(const char* kernel, const char* tensor, const Tensor& t,
                      int multiple, int element_bytes, const char* reason) {
  const uint64_t bytes = static_cast<uint64_t>(multiple) * element_bytes;
  if (t.rank > 0 && t.shape[t.rank - 1] % multiple == 0 &&
      t.data % bytes == 0) {
    return Status();
  }
  return Invalid(std::string(kernel) + ": " + tensor + " " + t.ShapeString() +
                 " at " + Hex(t.data) + ": this kernel's " + reason +
                 " need the last dimension to be a multiple of " +
                 std::to_string(multiple) + " and the pointer aligned to " +
                 std::to_string(bytes) +
                 " bytes (an ahead-of-time kernel has no variant for other "
                 "tensors)");
}

Status CheckGrid(const char* kernel, int dim, int64_t extent, uint32_t* out,
                 bool* empty) {
  if (extent <= 0) {
    *empty = true;
    return Status();
  }
  if (extent > kMaxGrid[dim]) {
    return Invalid(std::string(kernel) + ": grid dimension " +
                   std::to_string(dim) + " is " + std::to_string(extent) +
                   " at these sizes; CUDA's grid limit is " +
                   std::to_string(kMaxGrid[dim]));
  }
  *out = static_cast<uint32_t>(extent);
  return Status();
}

namespace {

// Encoded maps by their inputs: a launch with the same tensors reuses its
// descriptors, as the JIT's TensorMapCache does (an encoding depends on
// nothing else). Bounded: cleared when full.
class EncodedMaps {
 public:
  struct Key {  // zero-filled past the rank, compared as bytes
    uint64_t data = 0;
    int64_t shape[5] = {}, box[5] = {};
    int32_t rank = 0, element_bytes = 0, data_type = 0, swizzle_bytes = 0;
  };
  static Key KeyOf(const Tensor& t, int element_bytes, int data_type,
                   const int64_t* box, int swizzle_bytes) {
    Key k;
    k.data = t.data;
    k.rank = t.rank;
    for (int i = 0; i < t.rank; ++i) k.shape[i] = t.shape[i], k.box[i] = box[i];
    k.element_bytes = element_bytes;
    k.data_type = data_type;
    k.swizzle_bytes = swizzle_bytes;
    return k;
  }
  bool Find(const Key& key, TensorMap* out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = maps_.find(Bytes(key));
    if (it == maps_.end()) return false;
    *out = it->second;
    return true;
  }
  void Insert(const Key& key, const TensorMap& map) {
    std::lock_guard<std::mutex> lock(mu_);
    if (maps_.size() >= 4096) maps_.clear();
    maps_.emplace(Bytes(key), map);
  }
  static EncodedMaps& Global() {
    static auto* maps = new EncodedMaps;  // never destroyed: launches at exit
    return *maps;
  }

 private:
  static std::string Bytes(const Key& key) {
    static_assert(sizeof(Key) == 8 + 80 + 16, "Key has no padding");
    return std::string(reinterpret_cast<const char*>(&key), sizeof(Key));
  }
  std::mutex mu_;
  std::unordered_map<std::string, TensorMap> maps_;
};

}  // namespace

Status EncodeTensorMap(const char* kernel, const char* tensor, const Tensor& t,
                       int element_bytes, int data_type, const int64_t* box,
                       int swizzle_bytes, TensorMap* out) {
  const std::string what = std::string(kernel) + ": " + tensor + " " +
                           t.ShapeString() + ": its TMA descriptor: ";
  if (t.rank < 1 || t.rank > 5) {
    return Invalid(what + "rank " + std::to_string(t.rank) +
                   " is not in [1, 5]");
  }
  if (t.data % 16 != 0) {
    return Invalid(what + "the address " + Hex(t.data) +
                   " is not 16-byte aligned");
  }
  cuuint64_t dims[5], strides[4];
  cuuint32_t boxes[5], element_strides[5];
  uint64_t stride = static_cast<uint64_t>(element_bytes);
  for (int i = 0; i < t.rank; ++i) {  // innermost first
    const int d = t.rank - 1 - i;
    dims[i] = static_cast<cuuint64_t>(t.shape[d]);
    boxes[i] = static_cast<cuuint32_t>(box[d]);
    element_strides[i] = 1;
    if (i > 0) {
      strides[i - 1] = stride;
      if (stride % 16 != 0) {
        return Invalid(what + "its rows are " + std::to_string(stride) +
                       " bytes, not a multiple of 16");
      }
    }
    stride *= static_cast<uint64_t>(t.shape[d]);
  }
  const EncodedMaps::Key key =
      EncodedMaps::KeyOf(t, element_bytes, data_type, box, swizzle_bytes);
  if (EncodedMaps::Global().Find(key, out)) return Status();
  const internal::Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  if (cu->cuTensorMapEncodeTiled == nullptr) {
    return Status(StatusCode::kUnavailable,
                  what +
                      "the CUDA driver has no cuTensorMapEncodeTiled (TMA "
                      "needs a CUDA 12 or newer driver)");
  }
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  if (swizzle_bytes == 32) swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  if (swizzle_bytes == 64) swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  if (swizzle_bytes == 128) swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMap));
  // The driver encodes only in a current context, and a launch's Prepare
  // has popped its own by now: a host thread may have none
  // (CUDA_ERROR_INVALID_CONTEXT on an H100, session 29).
  CUcontext context = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::ResolveContext(*cu, nullptr, &context));
  internal::ScopedContext scoped(*cu, context);
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  Status s = internal::Check(
      *cu,
      cu->cuTensorMapEncodeTiled(
          reinterpret_cast<CUtensorMap*>(out->bytes),
          static_cast<CUtensorMapDataType>(data_type),
          static_cast<cuuint32_t>(t.rank), reinterpret_cast<void*>(t.data),
          dims, strides, boxes, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
          swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled");
  if (!s.ok()) return Status(s.code(), what + s.message());
  EncodedMaps::Global().Insert(key, *out);
  return Status();
}

}  // namespace tessel::aot
