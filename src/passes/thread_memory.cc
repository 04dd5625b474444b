#include "src/passes/thread_memory.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/walk.h"

namespace tessel::passes {
namespace {

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return std::numeric_limits<int64_t>::max();
  }
  return r;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return std::numeric_limits<int64_t>::max();
  }
  return r;
}

std::string Shape(const ir::BufferNode& b) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : b.shape) {
    std::optional<int64_t> c = ir::AsConstInt(d);
    dims.push_back(c ? absl::StrCat(*c) : std::string("?"));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

}  // namespace

ThreadMemory MeasureThreadMemory(const LoweringState& state) {
  ThreadMemory m;
  ir::ForEachStmt(state.program.body, [&](const ir::Stmt& s) {
    const auto* a = s.As<ir::AllocateNode>();
    if (a == nullptr) return;
    const ir::BufferNode* b = a->buffer.get();
    ThreadArray array{.alloc = a};
    if (b->scope == ir::Scope::kFragment) {
      auto it = state.layouts.find(b);
      if (it == state.layouts.end()) return;
      array.local_shape = it->second.local_shape();
    } else if (b->scope == ir::Scope::kLocal) {
      for (const ir::Expr& d : b->shape) {
        std::optional<int64_t> c = ir::AsConstInt(d);
        if (!c.has_value() || *c < 0) return;
        array.local_shape.push_back(*c);
      }
    } else {
      return;
    }
    array.bytes = std::max(dtype_bytes(b->dtype), 4);
    for (int64_t d : array.local_shape)
      array.bytes = SaturatingMul(array.bytes, d);
    m.total_bytes = SaturatingAdd(m.total_bytes, array.bytes);
    m.arrays.push_back(std::move(array));
  });
  return m;
}

absl::Status CheckThreadMemory(const LoweringState& state) {
  ThreadMemory m = MeasureThreadMemory(state);
  if (m.total_bytes <= kMaxThreadMemoryBytes) return absl::OkStatus();
  const ThreadArray* largest = nullptr;
  std::string parts;
  bool narrow = false;
  for (const ThreadArray& a : m.arrays) {
    if (largest == nullptr || a.bytes > largest->bytes) largest = &a;
    narrow |= a.bytes > 0 && dtype_bytes(a.alloc->buffer->dtype) < 4;
    if (a.bytes == 0) continue;
    absl::StrAppend(&parts, parts.empty() ? "" : ", ", a.alloc->buffer->name,
                    " ", a.bytes, " B");
  }
  const ir::BufferNode& b = *largest->alloc->buffer.get();
  const bool fragment = b.scope == ir::Scope::kFragment;
  std::string spread;
  if (fragment) {
    spread = absl::StrCat(" spread over ", state.threads,
                          state.threads == 1 ? " thread" : " threads");
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      ir::FormatLoc(largest->alloc->loc), ": ", state.program.name,
      ": the fragments and local arrays take ", m.total_bytes,
      " bytes per thread",
      m.arrays.size() > 1 ? absl::StrCat(" (", parts, ")") : "",
      narrow ? " (8- and 16-bit elements count 4 bytes: a register each)" : "",
      "; the largest, ", b.name, " (", ir::ScopeName(b.scope), " ",
      std::string(dtype_name(b.dtype)), " ", Shape(b), spread, "), takes ",
      largest->bytes, " bytes per thread and is allocated here; tessel allows ",
      kMaxThreadMemoryBytes,
      " bytes per thread (beyond the registers they run from local memory, "
      "and NVRTC takes minutes over the unrolled loops of larger ones). ",
      fragment ? "Use more threads or smaller tiles."
               : "Use smaller local arrays (or a fragment, which the block's "
                 "threads share)."));
}

}  // namespace tessel::passes
