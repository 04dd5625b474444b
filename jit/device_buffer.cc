#include "jit/device_buffer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/context.h"
#include "jit/driver_api.h"

namespace tessel::jit {
namespace {

absl::Status CheckSize(size_t bytes, size_t size, const char* what) {
  if (bytes > size) {
    return absl::OutOfRangeError(
        absl::StrCat(what, " of ", bytes, " bytes into a buffer of ", size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes,
                                                    CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  ScopedContext current(**api, *ctx);
  if (!current.status().ok()) return current.status();
  DeviceBuffer buffer;
  buffer.context_ = *ctx;
  if (bytes > 0) {
    if (absl::Status s = TESSEL_CU_CALL(**api, cuMemAlloc(&buffer.ptr_, bytes));
        !s.ok()) {
      return s;
    }
  }
  buffer.size_ = bytes;
  return buffer;
}

DeviceBuffer::~DeviceBuffer() { Release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)),
      size_(std::exchange(other.size_, 0)),
      context_(std::exchange(other.context_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void DeviceBuffer::Release() {
  if (ptr_ == 0) return;
  absl::StatusOr<const DriverApi*> api = Driver();
  if (api.ok()) {
    ScopedContext current(**api, context_);
    if (current.status().ok()) (*api)->cuMemFree(ptr_);
  }
  ptr_ = 0;
  size_ = 0;
}

absl::Status DeviceBuffer::CopyFromHost(const void* source, size_t bytes) {
  if (absl::Status s = CheckSize(bytes, size_, "copy"); !s.ok()) return s;
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  ScopedContext current(**api, context_);
  if (!current.status().ok()) return current.status();
  return TESSEL_CU_CALL(**api, cuMemcpyHtoD(ptr_, source, bytes));
}

absl::Status DeviceBuffer::CopyToHost(void* destination, size_t bytes) const {
  if (absl::Status s = CheckSize(bytes, size_, "copy"); !s.ok()) return s;
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  ScopedContext current(**api, context_);
  if (!current.status().ok()) return current.status();
  return TESSEL_CU_CALL(**api, cuMemcpyDtoH(destination, ptr_, bytes));
}

absl::Status DeviceBuffer::Fill(unsigned char value) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  ScopedContext current(**api, context_);
  if (!current.status().ok()) return current.status();
  return TESSEL_CU_CALL(**api, cuMemsetD8(ptr_, value, size_));
}

absl::Status SynchronizeStream(CUstream stream, CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  ScopedContext current(**api, *ctx);
  if (!current.status().ok()) return current.status();
  return TESSEL_CU_CALL(**api, cuStreamSynchronize(stream));
}

}  // namespace tessel::jit
