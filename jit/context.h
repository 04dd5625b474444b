// CUDA contexts: the calling thread's current context (the host
// application's own, or a device it made current), else device 0's primary
// context.
//
//   ASSIGN_OR_RETURN(CUcontext ctx, tessel::jit::ResolveContext(nullptr));
//   {
//     tessel::jit::ScopedContext current(**tessel::jit::Driver(), ctx);
//     RETURN_IF_ERROR(current.status());
//     ...  // driver calls that act on the current context
//   }
#ifndef TESSEL_JIT_CONTEXT_H_
#define TESSEL_JIT_CONTEXT_H_

#include <cuda.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/driver_api.h"

namespace tessel::jit {

// The primary context of device `ordinal`, retained once and held for the
// life of the process (as the CUDA runtime does).
absl::StatusOr<CUcontext> PrimaryContext(int ordinal = 0);

// `context` when given; otherwise the calling thread's current context;
// otherwise (none current) the primary context of device 0.
absl::StatusOr<CUcontext> ResolveContext(CUcontext context);

// The context work queued on `stream` runs in: the stream's own (a stream
// belongs to the context it was created in); for the legacy default stream
// (nullptr), ResolveContext(nullptr).
absl::StatusOr<CUcontext> StreamContext(CUstream stream);

// An identity of `context` that a later context reusing a destroyed one's
// handle does not share (cuCtxGetId; the handle itself on drivers before
// CUDA 12). An error for a destroyed context.
absl::StatusOr<uint64_t> ContextId(const DriverApi& api, CUcontext context);

// Makes `context` current for the scope when it is not already, and restores
// the previous one after. A thread with no current context keeps `context`
// current afterwards (as the runtime API would), which spares later calls a
// push and pop.
class ScopedContext {
 public:
  ScopedContext(const DriverApi& api, CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

  const absl::Status& status() const { return status_; }

 private:
  const DriverApi& api_;
  bool pushed_ = false;
  absl::Status status_;
};

// The device a context runs on.
absl::StatusOr<CUdevice> ContextDevice(const DriverApi& api, CUcontext context);

// An attribute of the device that `context` (nullptr: the default) runs on.
absl::StatusOr<int> DeviceAttribute(CUdevice_attribute attribute,
                                    CUcontext context = nullptr);

// The number of SMs of the device `context` runs on, asked once per device.
absl::StatusOr<int> MultiprocessorCount(CUcontext context);

// The NVRTC arch of the device: "sm_90a" for compute capability 9.0 (so
// wgmma and setmaxnreg are allowed), "sm_XY" otherwise.
std::string ArchForComputeCapability(int major, int minor);

// The arch of the device `context` (nullptr: the default) runs on.
absl::StatusOr<std::string> DetectArch(CUcontext context = nullptr);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CONTEXT_H_
