// tessel::aot::DeviceBuffer: cuMemAlloc'd memory for programs with no CUDA
// code of their own, in the context a launch without a stream uses.
#include <string>
#include <utility>

#include "src/aot_runtime/driver.h"
#include "tessel/aot_runtime.h"

namespace tessel::aot {

using internal::Check;
using internal::Driver;

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      context_(std::exchange(other.context_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer gone(std::move(*this));
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  const Driver* cu = nullptr;
  if (ptr_ == 0 || !internal::LoadDriver(&cu).ok()) return;
  internal::ScopedContext scoped(*cu, static_cast<CUcontext>(context_));
  if (scoped.status().ok()) cu->cuMemFree(ptr_);
}

Status DeviceBuffer::Allocate(size_t bytes, DeviceBuffer* out) {
  const Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  CUcontext context = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::ResolveContext(*cu, nullptr, &context));
  internal::ScopedContext scoped(*cu, context);
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  DeviceBuffer buffer;
  CUdeviceptr ptr = 0;
  TESSEL_AOT_RETURN_IF_ERROR(
      Check(*cu, cu->cuMemAlloc(&ptr, bytes == 0 ? 1 : bytes),
            "cuMemAlloc(" + std::to_string(bytes) + " bytes)"));
  buffer.ptr_ = ptr;
  buffer.bytes_ = bytes;
  buffer.context_ = context;
  *out = std::move(buffer);
  return Status();
}

Status DeviceBuffer::CopyFromHost(const void* src, size_t bytes) {
  if (bytes > bytes_) {
    return Status(StatusCode::kInvalidArgument,
                  "CopyFromHost of " + std::to_string(bytes) +
                      " bytes into a buffer of " + std::to_string(bytes_));
  }
  const Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  internal::ScopedContext scoped(*cu, static_cast<CUcontext>(context_));
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  return Check(*cu, cu->cuMemcpyHtoD(ptr_, src, bytes), "cuMemcpyHtoD");
}

Status DeviceBuffer::CopyToHost(void* dst, size_t bytes) const {
  if (bytes > bytes_) {
    return Status(StatusCode::kInvalidArgument,
                  "CopyToHost of " + std::to_string(bytes) +
                      " bytes from a buffer of " + std::to_string(bytes_));
  }
  const Driver* cu = nullptr;
  TESSEL_AOT_RETURN_IF_ERROR(internal::LoadDriver(&cu));
  internal::ScopedContext scoped(*cu, static_cast<CUcontext>(context_));
  TESSEL_AOT_RETURN_IF_ERROR(scoped.status());
  return Check(*cu, cu->cuMemcpyDtoH(dst, ptr_, bytes), "cuMemcpyDtoH");
}

}  // namespace tessel::aot
