#include "src/runtime/host_memory.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/driver_api.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"

namespace tessel::runtime {
namespace {

// Every buffer a statement names (an intrinsic's operands).
class Named : public ir::IRVisitor {
 public:
  std::vector<const ir::BufferNode*> buffers;
  void VisitBuffer(const ir::Buffer& b) override { buffers.push_back(b.get()); }
};

// [begin, end) of the bytes a view reaches; nullopt past the address space.
struct ByteRange {
  uintptr_t begin = 0, end = 0;
};
std::optional<ByteRange> BytesOf(const TensorView& t) {
  uint64_t last = 0;  // element offset of the last element
  uint64_t stride = 1;
  for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
    const uint64_t s =
        t.strides.empty() ? stride : static_cast<uint64_t>(t.strides[d]);
    uint64_t reach;
    if (__builtin_mul_overflow(static_cast<uint64_t>(t.shape[d] - 1), s,
                               &reach) ||
        __builtin_add_overflow(last, reach, &last) ||
        __builtin_mul_overflow(stride, static_cast<uint64_t>(t.shape[d]),
                               &stride)) {
      return std::nullopt;
    }
  }
  uint64_t bytes;
  uintptr_t end;
  if (__builtin_add_overflow(last, 1, &bytes) ||
      __builtin_mul_overflow(bytes, static_cast<uint64_t>(dtype_bytes(t.dtype)),
                             &bytes) ||
      __builtin_add_overflow(t.data, bytes, &end)) {
    return std::nullopt;
  }
  return ByteRange{t.data, end};
}

struct Mapping {
  uintptr_t begin = 0, end = 0;
  bool read = false, write = false;
};

// This process's mappings in address order, or nullopt without /proc.
std::optional<std::vector<Mapping>> ReadMaps() {
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (f == nullptr) return std::nullopt;
  std::vector<Mapping> maps;
  char line[4096];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    uintptr_t begin = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &begin, &end,
                    perms) == 3) {
      maps.push_back({begin, end, perms[0] == 'r', perms[1] == 'w'});
    }
    // The rest of a line longer than the buffer (a long path) is skipped.
    while (std::strchr(line, '\n') == nullptr &&
           std::fgets(line, sizeof line, f) != nullptr) {
    }
  }
  std::fclose(f);
  return maps;
}

// Empty when [r.begin, r.end) is mapped readable (and writable when asked);
// else why not.
std::string Unmapped(const std::vector<Mapping>& maps, ByteRange r,
                     bool write) {
  uintptr_t at = r.begin;
  auto it =
      std::upper_bound(maps.begin(), maps.end(), at,
                       [](uintptr_t a, const Mapping& m) { return a < m.end; });
  while (at < r.end) {
    if (it == maps.end() || it->begin > at) {
      return absl::StrFormat("nothing is mapped at %#x", at);
    }
    if (!it->read) {
      return absl::StrFormat("the page at %#x is not readable", at);
    }
    if (write && !it->write) {
      return absl::StrFormat(
          "the page at %#x is read-only and the kernel writes this tensor", at);
    }
    at = it->end;
    ++it;
  }
  return "";
}

// The driver's word on a pointer where the driver is in use: device memory
// (not managed) the host cannot read.
bool IsDeviceMemory(uintptr_t p) {
  const jit::DriverApi* cu = jit::DriverIfLoaded();
  if (cu == nullptr || cu->cuPointerGetAttribute == nullptr) return false;
  unsigned int type = 0;
  if (cu->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                static_cast<CUdeviceptr>(p)) != CUDA_SUCCESS ||
      type != CU_MEMORYTYPE_DEVICE) {
    return false;
  }
  unsigned int managed = 0;
  if (cu->cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                static_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) {
    managed = 0;
  }
  return managed == 0;
}

}  // namespace

std::vector<bool> WrittenParams(const ir::Program& program) {
  std::vector<const ir::BufferNode*> written;
  ir::ForEachStmt(program.body, [&](const ir::Stmt& s) {
    if (const auto* x = s.As<ir::StoreNode>())
      written.push_back(x->buffer.get());
    if (const auto* x = s.As<ir::CopyNode>())
      written.push_back(x->dst.buffer.get());
    if (const auto* x = s.As<ir::FillNode>())
      written.push_back(x->dst.buffer.get());
    if (const auto* x = s.As<ir::AtomicNode>())
      written.push_back(x->dst.buffer.get());
    if (const auto* x = s.As<ir::ReduceNode>()) written.push_back(x->dst.get());
    if (const auto* x = s.As<ir::CumsumNode>()) written.push_back(x->dst.get());
    if (const auto* x = s.As<ir::GemmNode>())
      written.push_back(x->c.buffer.get());
    if (const auto* x = s.As<ir::EvaluateNode>()) {
      Named named;
      named.VisitExpr(x->value);
      written.insert(written.end(), named.buffers.begin(), named.buffers.end());
    }
  });
  std::vector<bool> out;
  for (const ir::Buffer& p : program.params) {
    out.push_back(std::find(written.begin(), written.end(), p.get()) !=
                  written.end());
  }
  return out;
}

absl::Status CheckHostMemory(const KernelImpl& k,
                             const std::vector<TensorView>& tensors) {
  std::optional<std::vector<Mapping>> maps;
  bool maps_read = false;
  for (size_t i = 0; i < tensors.size() && i < k.params.size(); ++i) {
    const TensorView& t = tensors[i];
    auto refuse = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: %s at %#x: %s; a Target::cpu() kernel reads and writes "
          "host memory in place",
          k.name, k.params[i]->name, t.ToString(), t.data, why));
    };
    std::optional<ByteRange> range = BytesOf(t);
    if (!range.has_value()) {
      return refuse("its elements reach past the end of the address space");
    }
    if (IsDeviceMemory(t.data)) {
      return refuse(
          "this is CUDA device memory (pass host tensors, or compile for the "
          "GPU)");
    }
    if (!maps_read) {
      maps = ReadMaps();
      maps_read = true;
    }
    if (!maps.has_value()) continue;
    const bool write = i < k.param_written.size() && k.param_written[i];
    std::string why = Unmapped(*maps, *range, write);
    if (!why.empty()) {
      return refuse(absl::StrCat(why, " (", range->end - range->begin,
                                 " bytes from the pointer are needed)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace tessel::runtime
