#include "jit/driver_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tessel::jit {
namespace {

#define TESSEL_STRINGIZE_EXPANDED(x) TESSEL_STRINGIZE(x)
#define TESSEL_STRINGIZE(x) #x

constexpr char kDefaultLibrary[] = "libcuda.so.1";

struct LoadedDriver {
  absl::Status status;  // OK when `api` is usable
  DriverApi api;
};

absl::Mutex g_load_mu;
std::string* g_library_override ABSL_GUARDED_BY(g_load_mu) = nullptr;
std::atomic<const LoadedDriver*> g_driver{nullptr};

// Finds `base` by the symbol name the header maps it to (cuMemAlloc ->
// cuMemAlloc_v2): that is exactly the ABI we were compiled against.
// cuGetProcAddress is only the fallback, because asked with CUDA_VERSION it
// hands out the newest variant, whose signature may differ from the header's
// plain declaration (CUDA 13 gives cuCtxGetDevice_v2(device, ctx) for
// cuCtxGetDevice).
void* FindSymbol(void* handle, decltype(&::cuGetProcAddress) get_proc,
                 const char* base, const char* versioned) {
  if (void* fn = dlsym(handle, versioned); fn != nullptr) return fn;
  void* fn = nullptr;
  if (get_proc != nullptr) {
    CUdriverProcAddressQueryResult found;
    if (get_proc(base, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                 &found) == CUDA_SUCCESS &&
        found == CU_GET_PROC_ADDRESS_SUCCESS) {
      return fn;
    }
  }
  return nullptr;
}

LoadedDriver* Load(const std::string& library) {
  auto* loaded = new LoadedDriver;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded->status = absl::UnavailableError(absl::StrCat(
        "no CUDA driver: dlopen(\"", library,
        "\") failed: ", why != nullptr ? why : "unknown reason",
        ". Kernels can still be compiled for an explicit arch (e.g. "
        "Target::sm90a(), or --arch sm_90a for the tools), not loaded or "
        "launched"));
    return loaded;
  }
  DriverApi& api = loaded->api;
  auto missing = [&](const char* name) {
    loaded->status = absl::UnavailableError(
        absl::StrCat("the CUDA driver ", library, " lacks ", name,
                     " (driver too old for CUDA ", CUDA_VERSION, " headers)"));
    return loaded;
  };
  api.cuInit = reinterpret_cast<decltype(api.cuInit)>(dlsym(handle, "cuInit"));
  api.cuGetErrorName = reinterpret_cast<decltype(api.cuGetErrorName)>(
      dlsym(handle, "cuGetErrorName"));
  api.cuGetErrorString = reinterpret_cast<decltype(api.cuGetErrorString)>(
      dlsym(handle, "cuGetErrorString"));
  auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(
      dlsym(handle, TESSEL_STRINGIZE_EXPANDED(cuGetProcAddress)));
  if (api.cuInit == nullptr) return missing("cuInit");
  if (api.cuGetErrorName == nullptr) return missing("cuGetErrorName");
  if (api.cuGetErrorString == nullptr) return missing("cuGetErrorString");

  if (absl::Status init = TESSEL_CU_CALL(api, cuInit(0)); !init.ok()) {
    loaded->status = absl::UnavailableError(
        absl::StrCat("the CUDA driver did not initialize (no usable GPU?): ",
                     init.message()));
    return loaded;
  }
#define TESSEL_LOAD_REQUIRED(name)                                           \
  api.name = reinterpret_cast<decltype(api.name)>(                           \
      FindSymbol(handle, get_proc, #name, TESSEL_STRINGIZE_EXPANDED(name))); \
  if (api.name == nullptr) return missing(#name);
#define TESSEL_LOAD_OPTIONAL(name)                 \
  api.name = reinterpret_cast<decltype(api.name)>( \
      FindSymbol(handle, get_proc, #name, TESSEL_STRINGIZE_EXPANDED(name)));
  TESSEL_DRIVER_ENTRY_POINTS(TESSEL_LOAD_REQUIRED)
  TESSEL_DRIVER_OPTIONAL_ENTRY_POINTS(TESSEL_LOAD_OPTIONAL)
#undef TESSEL_LOAD_REQUIRED
#undef TESSEL_LOAD_OPTIONAL
  api.cuFuncGetParamCount =
      reinterpret_cast<decltype(api.cuFuncGetParamCount)>(FindSymbol(
          handle, get_proc, "cuFuncGetParamCount", "cuFuncGetParamCount"));

  if (absl::Status version =
          TESSEL_CU_CALL(api, cuDriverGetVersion(&api.driver_version));
      !version.ok()) {
    loaded->status = absl::UnavailableError(version.message());
  }
  return loaded;
}

}  // namespace

absl::StatusOr<const DriverApi*> Driver() {
  const LoadedDriver* loaded = g_driver.load(std::memory_order_acquire);
  if (loaded == nullptr) {
    absl::MutexLock lock(&g_load_mu);
    loaded = g_driver.load(std::memory_order_acquire);
    if (loaded == nullptr) {
      std::string library = kDefaultLibrary;
      if (g_library_override != nullptr) {
        library = *g_library_override;
      } else if (const char* env = std::getenv("TESSEL_LIBCUDA");
                 env != nullptr && *env != '\0') {
        library = env;
      }
      loaded = Load(library);
      g_driver.store(loaded, std::memory_order_release);
    }
  }
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

const DriverApi* DriverIfLoaded() {
  const LoadedDriver* loaded = g_driver.load(std::memory_order_acquire);
  if (loaded == nullptr || !loaded->status.ok()) return nullptr;
  return &loaded->api;
}

absl::Status CuResultToStatus(const DriverApi& api, CUresult result,
                              absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr ||
      api.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (api.cuGetErrorString == nullptr ||
      api.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  std::string message = absl::StrCat(
      call,
      " failed: ", name != nullptr ? name : absl::StrCat("CUresult ", result),
      " (", text != nullptr ? text : "no description", ")");
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return absl::InvalidArgumentError(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

namespace internal {
void ResetDriverForTesting(std::string library) {
  absl::MutexLock lock(&g_load_mu);
  delete g_library_override;
  g_library_override = library.empty() ? nullptr : new std::string(library);
  // Kept (not freed): a caller may still hold a pointer into the old table.
  static auto* retired = new std::vector<const LoadedDriver*>;
  if (const LoadedDriver* old = g_driver.exchange(nullptr)) {
    retired->push_back(old);
  }
}

bool DriverLoadAttemptedForTesting() {
  return g_driver.load(std::memory_order_acquire) != nullptr;
}
}  // namespace internal

}  // namespace tessel::jit
