// The CUDA Driver API, loaded with dlopen on first use (libcuda is never
// linked, so tessel loads and compiles on machines without a GPU).
//
//   ASSIGN_OR_RETURN(const DriverApi* cu, tessel::jit::Driver());
//   CUdevice device;
//   RETURN_IF_ERROR(TESSEL_CU_CALL(*cu, cuDeviceGet(&device, 0)));
//
// Without a driver every call of Driver() returns absl::UnavailableError
// saying why (library missing, entry point missing, cuInit failed).
// TESSEL_LIBCUDA names another library to load (tests point it at a missing
// one).
#ifndef TESSEL_JIT_DRIVER_API_H_
#define TESSEL_JIT_DRIVER_API_H_

#include <cuda.h>  // types only

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::jit {

// X(name): every entry point tessel calls. The member is named after the
// header's (possibly versioned, e.g. cuMemAlloc_v2) symbol and typed from its
// declaration, so calls read like plain driver calls: `cu.cuMemAlloc(...)`.
#define TESSEL_DRIVER_ENTRY_POINTS(X) \
  X(cuDriverGetVersion)               \
  X(cuDeviceGet)                      \
  X(cuDeviceGetCount)                 \
  X(cuDeviceGetAttribute)             \
  X(cuDeviceGetName)                  \
  X(cuDevicePrimaryCtxRetain)         \
  X(cuDevicePrimaryCtxRelease)        \
  X(cuCtxGetCurrent)                  \
  X(cuCtxSetCurrent)                  \
  X(cuCtxPushCurrent)                 \
  X(cuCtxPopCurrent)                  \
  X(cuCtxGetDevice)                   \
  X(cuCtxSynchronize)                 \
  X(cuModuleLoadData)                 \
  X(cuModuleUnload)                   \
  X(cuModuleGetFunction)              \
  X(cuFuncGetAttribute)               \
  X(cuFuncSetAttribute)               \
  X(cuLaunchKernel)                   \
  X(cuMemAlloc)                       \
  X(cuMemFree)                        \
  X(cuMemcpyHtoD)                     \
  X(cuMemcpyDtoH)                     \
  X(cuMemsetD8)                       \
  X(cuStreamCreate)                   \
  X(cuStreamDestroy)                  \
  X(cuStreamSynchronize)              \
  X(cuEventCreate)                    \
  X(cuEventRecord)                    \
  X(cuEventSynchronize)               \
  X(cuEventElapsedTime)               \
  X(cuEventDestroy)

// Entry points that old drivers may lack; null when absent.
// cuLaunchKernelEx and cuOccupancyMaxActiveClusters (CUDA 12.0) launch
// thread-block clusters. cuCtxGetId (CUDA 12.0) tells a live context from a
// destroyed one whose handle was reused; cuCtxCreate / cuCtxDestroy serve tests
// and hosts that make their own contexts. cuPointerGetAttribute tells the
// CPU target's launch a device pointer from a host one.
#define TESSEL_DRIVER_OPTIONAL_ENTRY_POINTS(X) \
  X(cuFuncGetParamInfo)                        \
  X(cuTensorMapEncodeTiled)                    \
  X(cuCtxGetId)                                \
  X(cuStreamGetCtx)                            \
  X(cuCtxCreate)                               \
  X(cuCtxDestroy)                              \
  X(cuLaunchKernelEx)                          \
  X(cuOccupancyMaxActiveClusters)              \
  X(cuPointerGetAttribute)

struct DriverApi {
#define TESSEL_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  TESSEL_DRIVER_MEMBER(cuInit)
  TESSEL_DRIVER_MEMBER(cuGetErrorName)
  TESSEL_DRIVER_MEMBER(cuGetErrorString)
  TESSEL_DRIVER_ENTRY_POINTS(TESSEL_DRIVER_MEMBER)
  TESSEL_DRIVER_OPTIONAL_ENTRY_POINTS(TESSEL_DRIVER_MEMBER)
#undef TESSEL_DRIVER_MEMBER
  // Newer drivers only, and not in every <cuda.h> tessel builds with: typed
  // here. Lets the signature check learn the parameter count without a
  // failing cuFuncGetParamInfo call past the last parameter.
  CUresult(CUDAAPI* cuFuncGetParamCount)(CUfunction func,
                                         size_t* param_count) = nullptr;
  int driver_version = 0;  // e.g. 13000
};

// The loaded table, or Unavailable. Loads (and calls cuInit) once; cheap after.
absl::StatusOr<const DriverApi*> Driver();

// The table when an earlier Driver() call loaded it, else null; never
// loads the driver (for checks that only matter where it is in use, such as
// whether a pointer is device memory).
const DriverApi* DriverIfLoaded();

// OK for CUDA_SUCCESS; otherwise a Status naming the failed call and the
// error's name and description, e.g.
// "cuModuleLoadData(...) failed: CUDA_ERROR_INVALID_IMAGE (device kernel image
// is invalid)". The code follows the error: out of memory ->
// ResourceExhausted, invalid value -> InvalidArgument, no device ->
// Unavailable, otherwise Internal.
absl::Status CuResultToStatus(const DriverApi& api, CUresult result,
                              absl::string_view call);

// Checks a driver call and names it: TESSEL_CU_CALL(api, cuInit(0)).
#define TESSEL_CU_CALL(api, call) \
  ::tessel::jit::CuResultToStatus((api), (api).call, #call)

namespace internal {
// Drops the loaded table and loads `library` on the next Driver() call (empty:
// the default, libcuda.so.1). Tests only: not safe while other threads use
// the driver; the old table stays allocated.
void ResetDriverForTesting(std::string library);
// Whether Driver() was called since the last reset (tests of code that must
// not start the driver: compiling for an explicit target).
bool DriverLoadAttemptedForTesting();
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_DRIVER_API_H_
