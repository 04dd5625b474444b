#include "jit/context.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tessel::jit {

absl::StatusOr<CUcontext> PrimaryContext(int ordinal) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* retained = new std::map<int, CUcontext>;  // never released
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  const DriverApi& cu = **api;
  absl::MutexLock lock(&mu);
  if (auto it = retained->find(ordinal); it != retained->end()) {
    return it->second;
  }
  int count = 0;
  if (absl::Status s = TESSEL_CU_CALL(cu, cuDeviceGetCount(&count)); !s.ok()) {
    return s;
  }
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError(absl::StrCat(
        "no CUDA device ", ordinal, ": the driver sees ", count, " device(s)"));
  }
  CUdevice device;
  if (absl::Status s = TESSEL_CU_CALL(cu, cuDeviceGet(&device, ordinal));
      !s.ok()) {
    return s;
  }
  CUcontext context = nullptr;
  if (absl::Status s =
          TESSEL_CU_CALL(cu, cuDevicePrimaryCtxRetain(&context, device));
      !s.ok()) {
    return s;
  }
  (*retained)[ordinal] = context;
  return context;
}

absl::StatusOr<CUcontext> ResolveContext(CUcontext context) {
  if (context != nullptr) return context;
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  CUcontext current = nullptr;
  if (absl::Status s = TESSEL_CU_CALL(**api, cuCtxGetCurrent(&current));
      !s.ok()) {
    return s;
  }
  if (current != nullptr) return current;
  return PrimaryContext(0);
}

absl::StatusOr<CUcontext> StreamContext(CUstream stream) {
  if (stream == nullptr) return ResolveContext(nullptr);
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  // A driver without cuStreamGetCtx (before CUDA 9.2): the caller's context.
  if ((*api)->cuStreamGetCtx == nullptr) return ResolveContext(nullptr);
  CUcontext context = nullptr;
  if (absl::Status s = TESSEL_CU_CALL(**api, cuStreamGetCtx(stream, &context));
      !s.ok()) {
    return s;
  }
  return context;
}

absl::StatusOr<uint64_t> ContextId(const DriverApi& api, CUcontext context) {
  if (api.cuCtxGetId == nullptr) return reinterpret_cast<uintptr_t>(context);
  unsigned long long id = 0;  // NOLINT(runtime/int): the driver's type
  if (absl::Status s = TESSEL_CU_CALL(api, cuCtxGetId(context, &id)); !s.ok()) {
    return s;
  }
  return static_cast<uint64_t>(id);
}

ScopedContext::ScopedContext(const DriverApi& api, CUcontext context)
    : api_(api) {
  CUcontext current = nullptr;
  status_ = TESSEL_CU_CALL(api, cuCtxGetCurrent(&current));
  if (!status_.ok() || current == context) return;
  if (current == nullptr) {
    status_ = TESSEL_CU_CALL(api, cuCtxSetCurrent(context));
    return;
  }
  status_ = TESSEL_CU_CALL(api, cuCtxPushCurrent(context));
  pushed_ = status_.ok();
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped;
    api_.cuCtxPopCurrent(&popped);
  }
}

absl::StatusOr<CUdevice> ContextDevice(const DriverApi& api,
                                       CUcontext context) {
  ScopedContext current(api, context);
  if (!current.status().ok()) return current.status();
  CUdevice device;
  if (absl::Status s = TESSEL_CU_CALL(api, cuCtxGetDevice(&device)); !s.ok()) {
    return s;
  }
  return device;
}

absl::StatusOr<int> DeviceAttribute(CUdevice_attribute attribute,
                                    CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<CUdevice> device = ContextDevice(**api, *ctx);
  if (!device.ok()) return device.status();
  int value = 0;
  if (absl::Status s = TESSEL_CU_CALL(
          **api, cuDeviceGetAttribute(&value, attribute, *device));
      !s.ok()) {
    return s;
  }
  return value;
}

absl::StatusOr<int> MultiprocessorCount(CUcontext context) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* counts = new std::map<CUdevice, int>;  // never released
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUdevice> device = ContextDevice(**api, context);
  if (!device.ok()) return device.status();
  absl::MutexLock lock(&mu);
  if (auto it = counts->find(*device); it != counts->end()) return it->second;
  int value = 0;
  if (absl::Status s = TESSEL_CU_CALL(
          **api,
          cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               *device));
      !s.ok()) {
    return s;
  }
  (*counts)[*device] = value;
  return value;
}

std::string ArchForComputeCapability(int major, int minor) {
  std::string arch = absl::StrCat("sm_", major, minor);
  if (major == 9 && minor == 0) arch += "a";
  return arch;
}

absl::StatusOr<std::string> DetectArch(CUcontext context) {
  absl::StatusOr<int> major =
      DeviceAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, context);
  if (!major.ok()) return major.status();
  absl::StatusOr<int> minor =
      DeviceAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, context);
  if (!minor.ok()) return minor.status();
  return ArchForComputeCapability(*major, *minor);
}

}  // namespace tessel::jit
