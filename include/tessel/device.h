// Device memory, streams and facts about the current device, for host
// programs with no CUDA code of their own (the samples, tessel::testing,
// benchmark reports) and for those that have some.
//
//   TESSEL_ASSIGN_OR_RETURN(tessel::DeviceTensor a,
//                           tessel::DeviceTensor::FromHost(host_a));
//   TESSEL_ASSIGN_OR_RETURN(tessel::DeviceTensor c,
//                           tessel::DeviceTensor::Allocate(tessel::f32, {M,
//                           N}));
//   TESSEL_RETURN_IF_ERROR(kernel.launch({a.view(), b.view(), c.view()}));
//   TESSEL_ASSIGN_OR_RETURN(tessel::HostTensor result, c.Download());
//
// Everything here acts on the calling thread's current CUDA context (the
// one cudaSetDevice or cuCtxSetCurrent made current), else on device 0's
// primary context, the one the CUDA runtime uses for device 0 and where
// launch() runs kernels when no context is current. Memory stays in the
// context it was allocated in: its copies and its release go there whatever
// is current later.
//
// With the CUDA runtime or driver API in the same program (docs/host.md):
// a cudaMalloc / cuMemAlloc pointer is a TensorView's data as it is
// (TensorView::Contiguous(ptr, f16, {M, K})); a cudaStream_t or CUstream is
// launch()'s stream (the same handle: reinterpret_cast<CUstream_st*>); and
// cudaSetDevice(n) or cuCtxSetCurrent(ctx) picks where launch() and
// everything here run. Copies here are synchronous on the legacy default
// stream: wait for a kernel launched on your own stream before Download.
#ifndef TESSEL_DEVICE_H_
#define TESSEL_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/dtype.h"
#include "tessel/host_tensor.h"
#include "tessel/runtime.h"

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

// A tensor in device memory: dtype, row-major shape and the memory, freed
// when it goes. Moves; does not copy.
class DeviceTensor {
 public:
  // Uninitialized memory for `shape` elements of `dtype`.
  static absl::StatusOr<DeviceTensor> Allocate(DataType dtype,
                                               std::vector<int64_t> shape);
  // Allocate, then Upload(host).
  static absl::StatusOr<DeviceTensor> FromHost(const HostTensor& host);

  DeviceTensor() = default;  // empty: no memory, shape {0}

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const;
  size_t num_bytes() const { return memory_.size(); }
  uint64_t ptr() const { return memory_.ptr(); }  // a CUdeviceptr
  // The whole tensor, row-major, for launch().
  TensorView view() const { return TensorView{ptr(), dtype_, shape_, {}}; }

  // Synchronous copies of the whole tensor; `host` must have its dtype and
  // shape (InvalidArgument naming both otherwise).
  absl::Status Upload(const HostTensor& host);
  absl::Status Download(HostTensor& host) const;
  absl::StatusOr<HostTensor> Download() const;

 private:
  DeviceMemory memory_;
  DataType dtype_ = DataType::kF32;
  std::vector<int64_t> shape_ = {0};
};

// A CUDA stream of the current context (non-blocking: it does not wait for
// the legacy default stream), destroyed when it goes. get() is what
// launch() takes; a cudaStream_t is the same handle.
class Stream {
 public:
  static absl::StatusOr<Stream> Create();

  Stream() = default;
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream_st* get() const { return stream_; }
  absl::Status Synchronize() const;  // waits for the work queued on it

 private:
  void Release();
  CUstream_st* stream_ = nullptr;
};

// Waits for the work queued on `stream` (nullptr: the legacy default
// stream).
absl::Status Synchronize(CUstream_st* stream = nullptr);

// Why no GPU can be used (no driver, no device, ...); "" when one can.
std::string GpuUnavailableReason();

// What benchmark reports record about the current context's device (device
// 0 when none is current).
struct DeviceInfo {
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "sm_90a"
  int multiprocessors = 0;
  int driver_version = 0;  // cuDriverGetVersion: 12040 for 12.4
};
absl::StatusOr<DeviceInfo> GetDeviceInfo();

}  // namespace tessel

#endif  // TESSEL_DEVICE_H_
