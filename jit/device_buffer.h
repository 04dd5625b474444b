// Device memory owned by an object (freed when it goes), and stream sync.
//
//   ASSIGN_OR_RETURN(DeviceBuffer x, DeviceBuffer::Allocate(n *
//   sizeof(float))); RETURN_IF_ERROR(x.CopyFromHost(host.data(), n *
//   sizeof(float)));
//   ...launch...
//   RETURN_IF_ERROR(SynchronizeStream(nullptr));
//   RETURN_IF_ERROR(x.CopyToHost(host.data(), n * sizeof(float)));
#ifndef TESSEL_JIT_DEVICE_BUFFER_H_
#define TESSEL_JIT_DEVICE_BUFFER_H_

#include <cuda.h>

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::jit {

class DeviceBuffer {
 public:
  // `bytes` of device memory in `context` (nullptr: the current context,
  // else device 0's primary).
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes,
                                               CUcontext context = nullptr);

  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }
  CUcontext context() const { return context_; }

  // Synchronous copies of `bytes` (at most size()).
  absl::Status CopyFromHost(const void* source, size_t bytes);
  absl::Status CopyToHost(void* destination, size_t bytes) const;
  absl::Status Fill(unsigned char value);

 private:
  void Release();

  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  CUcontext context_ = nullptr;
};

// Waits for `stream` (nullptr: the legacy default stream) in `context`
// (nullptr: the current context, else device 0's primary).
absl::Status SynchronizeStream(CUstream stream, CUcontext context = nullptr);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_DEVICE_BUFFER_H_
