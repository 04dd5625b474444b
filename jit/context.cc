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
  return PrimaryContext(0);
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
