#include "src/aot_runtime/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace tessel::aot::internal {
namespace {

#define TESSEL_AOT_STRINGIZE_EXPANDED(x) TESSEL_AOT_STRINGIZE(x)
#define TESSEL_AOT_STRINGIZE(x) #x

struct Loaded {
  Status status;
  Driver driver;
};

// By the symbol the header maps `base` to (cuMemAlloc -> cuMemAlloc_v2): the
// ABI this file was compiled against; cuGetProcAddress only as a fallback.
void* FindSymbol(void* handle, decltype(&::cuGetProcAddress) get_proc,
                 const char* base, const char* versioned) {
  if (void* fn = dlsym(handle, versioned); fn != nullptr) return fn;
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found;
  if (get_proc != nullptr &&
      get_proc(base, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) ==
          CUDA_SUCCESS &&
      found == CU_GET_PROC_ADDRESS_SUCCESS) {
    return fn;
  }
  return nullptr;
}

void Load(Loaded& loaded) {
  std::string library = "libcuda.so.1";
  if (const char* env = std::getenv("TESSEL_LIBCUDA");
      env != nullptr && *env != '\0') {
    library = env;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.status =
        Status(StatusCode::kUnavailable,
               "no CUDA driver: dlopen(\"" + library +
                   "\") failed: " + (why != nullptr ? why : "unknown reason"));
    return;
  }
  Driver& cu = loaded.driver;
  auto missing = [&](const char* name) {
    loaded.status = Status(StatusCode::kUnavailable,
                           "the CUDA driver " + library + " lacks " + name +
                               " (a driver older than CUDA " +
                               std::to_string(CUDA_VERSION / 1000) + ")");
  };
  cu.cuInit = reinterpret_cast<decltype(cu.cuInit)>(dlsym(handle, "cuInit"));
  cu.cuGetErrorName = reinterpret_cast<decltype(cu.cuGetErrorName)>(
      dlsym(handle, "cuGetErrorName"));
  cu.cuGetErrorString = reinterpret_cast<decltype(cu.cuGetErrorString)>(
      dlsym(handle, "cuGetErrorString"));
  if (cu.cuInit == nullptr) return missing("cuInit");
  if (cu.cuGetErrorName == nullptr) return missing("cuGetErrorName");
  if (cu.cuGetErrorString == nullptr) return missing("cuGetErrorString");
  auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(
      dlsym(handle, TESSEL_AOT_STRINGIZE_EXPANDED(cuGetProcAddress)));
  if (Status init = Check(cu, cu.cuInit(0), "cuInit"); !init.ok()) {
    loaded.status = Status(StatusCode::kUnavailable,
                           "the CUDA driver did not initialize (no usable "
                           "GPU?): " +
                               init.message());
    return;
  }
#define TESSEL_AOT_LOAD(name)                               \
  cu.name = reinterpret_cast<decltype(cu.name)>(FindSymbol( \
      handle, get_proc, #name, TESSEL_AOT_STRINGIZE_EXPANDED(name)));
#define TESSEL_AOT_LOAD_REQUIRED(name) \
  TESSEL_AOT_LOAD(name)                \
  if (cu.name == nullptr) return missing(#name);
  TESSEL_AOT_DRIVER_ENTRY_POINTS(TESSEL_AOT_LOAD_REQUIRED)
  TESSEL_AOT_DRIVER_OPTIONAL_ENTRY_POINTS(TESSEL_AOT_LOAD)
#undef TESSEL_AOT_LOAD_REQUIRED
#undef TESSEL_AOT_LOAD
}

}  // namespace

Status LoadDriver(const Driver** out) {
  static Loaded* loaded = [] {
    auto* l = new Loaded;  // never freed: launches may run at exit
    Load(*l);
    return l;
  }();
  if (!loaded->status.ok()) return loaded->status;
  *out = &loaded->driver;
  return Status();
}

Status Check(const Driver& cu, CUresult result, const std::string& call) {
  if (result == CUDA_SUCCESS) return Status();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cu.cuGetErrorName == nullptr ||
      cu.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (cu.cuGetErrorString == nullptr ||
      cu.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  std::string message =
      call + " failed: " +
      (name != nullptr ? std::string(name)
                       : "CUresult " + std::to_string(result)) +
      " (" + (text != nullptr ? text : "no description") + ")";
  StatusCode code = StatusCode::kInternal;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      code = StatusCode::kResourceExhausted;
      break;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      code = StatusCode::kInvalidArgument;
      break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      code = StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  return Status(code, std::move(message));
}

ScopedContext::ScopedContext(const Driver& cu, CUcontext context) : cu_(cu) {
  CUcontext current = nullptr;
  if (cu.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) {
    return;
  }
  status_ = Check(cu, cu.cuCtxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = status_.ok();
}

ScopedContext::~ScopedContext() {
  CUcontext popped = nullptr;
  if (pushed_) cu_.cuCtxPopCurrent(&popped);
}

Status ResolveContext(const Driver& cu, CUstream stream, CUcontext* out) {
  if (stream != nullptr && cu.cuStreamGetCtx != nullptr) {
    return Check(cu, cu.cuStreamGetCtx(stream, out), "cuStreamGetCtx");
  }
  CUcontext current = nullptr;
  if (Status s = Check(cu, cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
      !s.ok()) {
    return s;
  }
  if (current != nullptr) {
    *out = current;
    return Status();
  }
  // Device 0's primary context, retained once for the process (the one the
  // CUDA runtime uses).
  static std::mutex mu;
  static CUcontext primary = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (primary == nullptr) {
    CUdevice device = 0;
    TESSEL_AOT_RETURN_IF_ERROR(
        Check(cu, cu.cuDeviceGet(&device, 0), "cuDeviceGet(0)"));
    TESSEL_AOT_RETURN_IF_ERROR(
        Check(cu, cu.cuDevicePrimaryCtxRetain(&primary, device),
              "cuDevicePrimaryCtxRetain"));
  }
  *out = primary;
  return Status();
}

}  // namespace tessel::aot::internal
