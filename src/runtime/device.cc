#include "tessel/device.h"

#include <utility>

#include "jit/context.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"

namespace tessel {

struct DeviceMemory::Impl {
  jit::DeviceBuffer buffer;
};

DeviceMemory::DeviceMemory() = default;
DeviceMemory::~DeviceMemory() = default;
DeviceMemory::DeviceMemory(DeviceMemory&&) noexcept = default;
DeviceMemory& DeviceMemory::operator=(DeviceMemory&&) noexcept = default;

absl::StatusOr<DeviceMemory> DeviceMemory::Allocate(size_t bytes) {
  absl::StatusOr<jit::DeviceBuffer> buffer = jit::DeviceBuffer::Allocate(bytes);
  if (!buffer.ok()) return buffer.status();
  DeviceMemory m;
  m.impl_ = std::make_unique<Impl>(Impl{std::move(*buffer)});
  return m;
}

uint64_t DeviceMemory::ptr() const {
  return impl_ ? static_cast<uint64_t>(impl_->buffer.ptr()) : 0;
}

size_t DeviceMemory::size() const { return impl_ ? impl_->buffer.size() : 0; }

absl::Status DeviceMemory::CopyFromHost(const void* source, size_t bytes) {
  if (!impl_) return absl::FailedPreconditionError("empty DeviceMemory");
  return impl_->buffer.CopyFromHost(source, bytes);
}

absl::Status DeviceMemory::CopyToHost(void* destination, size_t bytes) const {
  if (!impl_) return absl::FailedPreconditionError("empty DeviceMemory");
  return impl_->buffer.CopyToHost(destination, bytes);
}

absl::Status DeviceMemory::Fill(unsigned char value) {
  if (!impl_) return absl::FailedPreconditionError("empty DeviceMemory");
  return impl_->buffer.Fill(value);
}

absl::Status Synchronize(CUstream_st* stream) {
  return jit::SynchronizeStream(stream);
}

std::string GpuUnavailableReason() {
  if (absl::StatusOr<const jit::DriverApi*> api = jit::Driver(); !api.ok()) {
    return std::string(api.status().message());
  }
  if (absl::StatusOr<CUcontext> context = jit::PrimaryContext(0);
      !context.ok()) {
    return std::string(context.status().message());
  }
  return "";
}

absl::StatusOr<DeviceInfo> GetDeviceInfo() {
  absl::StatusOr<const jit::DriverApi*> api = jit::Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> context = jit::ResolveContext(nullptr);
  if (!context.ok()) return context.status();
  DeviceInfo info;
  if (absl::StatusOr<CUdevice> device = jit::ContextDevice(**api, *context);
      device.ok()) {
    char name[256] = {};
    if ((*api)->cuDeviceGetName(name, sizeof(name), *device) == CUDA_SUCCESS) {
      info.name = name;
    }
  }
  if (absl::StatusOr<std::string> arch = jit::DetectArch(*context); arch.ok()) {
    info.arch = *arch;
  }
  if (absl::StatusOr<int> sms = jit::MultiprocessorCount(*context); sms.ok()) {
    info.multiprocessors = *sms;
  }
  info.driver_version = (*api)->driver_version;
  return info;
}

}  // namespace tessel
