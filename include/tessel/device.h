// Device memory and facts about device 0, for host programs with no CUDA
// code of their own (the samples, tessel::testing, benchmark reports).
//
//   TESSEL_ASSIGN_OR_RETURN(tessel::DeviceMemory d,
//                           tessel::DeviceMemory::Allocate(a.num_bytes()));
//   TESSEL_RETURN_IF_ERROR(d.CopyFromHost(a.data(), a.num_bytes()));
//   TESSEL_RETURN_IF_ERROR(kernel.launch(
//       {tessel::TensorView::Contiguous(d.ptr(), tessel::f16, {M, K})}));
//   TESSEL_RETURN_IF_ERROR(tessel::Synchronize());
//
// Memory lives in device 0's primary context, where launch() runs kernels
// when no context is current.
#ifndef TESSEL_DEVICE_H_
#define TESSEL_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct CUstream_st;

namespace tessel {

class DeviceMemory {
 public:
  static absl::StatusOr<DeviceMemory> Allocate(size_t bytes);

  DeviceMemory();
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&&) noexcept;
  DeviceMemory& operator=(DeviceMemory&&) noexcept;

  uint64_t ptr() const;  // a CUdeviceptr (0 when empty)
  size_t size() const;
  absl::Status CopyFromHost(const void* source, size_t bytes);
  absl::Status CopyToHost(void* destination, size_t bytes) const;
  absl::Status Fill(unsigned char value);  // every byte

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Waits for the work queued on `stream` (nullptr: the legacy default
// stream).
absl::Status Synchronize(CUstream_st* stream = nullptr);

// Why device 0 cannot be used (no driver, no device, ...); "" when it can.
std::string GpuUnavailableReason();

// What benchmark reports record about device 0.
struct DeviceInfo {
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "sm_90a"
  int multiprocessors = 0;
  int driver_version = 0;  // cuDriverGetVersion: 12040 for 12.4
};
absl::StatusOr<DeviceInfo> GetDeviceInfo();

}  // namespace tessel

#endif  // TESSEL_DEVICE_H_
