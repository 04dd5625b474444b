// The CUDA Driver API for ahead-of-time kernels, loaded with dlopen on
// first use: the application links no CUDA library, and a machine without a
// driver gets a Status saying so, not a loader error.
//
//   const Driver* cu = nullptr;
//   TESSEL_AOT_RETURN_IF_ERROR(LoadDriver(&cu));
//   TESSEL_AOT_RETURN_IF_ERROR(Check(*cu, cu->cuCtxSynchronize(),
//   "cuCtxSynchronize"));
//
// TESSEL_LIBCUDA names another library to load (as for tessel's JIT).
#ifndef TESSEL_SRC_AOT_RUNTIME_DRIVER_H_
#define TESSEL_SRC_AOT_RUNTIME_DRIVER_H_

#include <cuda.h>  // types only

#include "tessel/aot_runtime.h"

namespace tessel::aot::internal {

// X(name): the entry points the AOT runtime calls; the member is typed from
// the header's declaration and found by its (possibly versioned) symbol.
#define TESSEL_AOT_DRIVER_ENTRY_POINTS(X) \
  X(cuDeviceGet)                          \
  X(cuDeviceGetAttribute)                 \
  X(cuDevicePrimaryCtxRetain)             \
  X(cuCtxGetCurrent)                      \
  X(cuCtxPushCurrent)                     \
  X(cuCtxPopCurrent)                      \
  X(cuCtxGetDevice)                       \
  X(cuCtxSynchronize)                     \
  X(cuModuleLoadData)                     \
  X(cuModuleUnload)                       \
  X(cuModuleGetFunction)                  \
  X(cuFuncSetAttribute)                   \
  X(cuLaunchKernel)                       \
  X(cuMemAlloc)                           \
  X(cuMemFree)                            \
  X(cuMemcpyHtoD)                         \
  X(cuMemcpyDtoH)                         \
  X(cuStreamSynchronize)

// Entry points old drivers may lack: null when absent.
#define TESSEL_AOT_DRIVER_OPTIONAL_ENTRY_POINTS(X) \
  X(cuStreamGetCtx)                                \
  X(cuCtxGetId)                                    \
  X(cuTensorMapEncodeTiled)                        \
  X(cuLaunchKernelEx)                              \
  X(cuOccupancyMaxActiveClusters)

struct Driver {
#define TESSEL_AOT_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  TESSEL_AOT_DRIVER_MEMBER(cuInit)
  TESSEL_AOT_DRIVER_MEMBER(cuGetErrorName)
  TESSEL_AOT_DRIVER_MEMBER(cuGetErrorString)
  TESSEL_AOT_DRIVER_ENTRY_POINTS(TESSEL_AOT_DRIVER_MEMBER)
  TESSEL_AOT_DRIVER_OPTIONAL_ENTRY_POINTS(TESSEL_AOT_DRIVER_MEMBER)
#undef TESSEL_AOT_DRIVER_MEMBER
};

// The loaded table, or Unavailable saying why (loads and calls cuInit once).
Status LoadDriver(const Driver** out);

// OK for CUDA_SUCCESS, else a Status naming `call` and the error:
// "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (...)".
Status Check(const Driver& cu, CUresult result, const std::string& call);

// Makes `context` current for its lifetime when it is not already.
class ScopedContext {
 public:
  ScopedContext(const Driver& cu, CUcontext context);
  ~ScopedContext();
  const Status& status() const { return status_; }

 private:
  const Driver& cu_;
  bool pushed_ = false;
  Status status_;
};

// The stream's context, else the current one, else device 0's primary.
Status ResolveContext(const Driver& cu, CUstream stream, CUcontext* out);

}  // namespace tessel::aot::internal

#endif  // TESSEL_SRC_AOT_RUNTIME_DRIVER_H_
