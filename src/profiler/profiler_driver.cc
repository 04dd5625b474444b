#include "src/profiler/profiler_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/driver_api.h"

namespace tessel::profiler {
namespace {

#define TESSEL_PROFILER_STRINGIZE_EXPANDED(x) TESSEL_PROFILER_STRINGIZE(x)
#define TESSEL_PROFILER_STRINGIZE(x) #x

struct Loaded {
  absl::Status status;
  ProfilerDriverApi api;
};

const Loaded* Load() {
  auto* loaded = new Loaded;  // lives as long as the process, like jit's
  const char* env = std::getenv("TESSEL_LIBCUDA");
  const std::string library =
      env != nullptr && *env != '\0' ? env : "libcuda.so.1";
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded->status = absl::UnavailableError(
        absl::StrCat("do_bench: dlopen(\"", library,
                     "\") failed: ", why != nullptr ? why : "unknown reason"));
    return loaded;
  }
  // By the symbol the header maps each name to (cuStreamBeginCapture ->
  // cuStreamBeginCapture_v2), the ABI these declarations describe.
#define TESSEL_PROFILER_LOAD(name)                                       \
  loaded->api.name = reinterpret_cast<decltype(loaded->api.name)>(       \
      dlsym(handle, TESSEL_PROFILER_STRINGIZE_EXPANDED(name)));          \
  if (loaded->api.name == nullptr) {                                     \
    loaded->status = absl::UnavailableError(absl::StrCat(                \
        "do_bench: the CUDA driver ", library, " lacks ",                \
        TESSEL_PROFILER_STRINGIZE_EXPANDED(name), " (driver too old)")); \
    return loaded;                                                       \
  }
  TESSEL_PROFILER_DRIVER_ENTRY_POINTS(TESSEL_PROFILER_LOAD)
#undef TESSEL_PROFILER_LOAD
  return loaded;
}

}  // namespace

absl::StatusOr<const ProfilerDriverApi*> ProfilerDriver() {
  // The main table first: it says clearly why there is no driver.
  if (absl::StatusOr<const jit::DriverApi*> api = jit::Driver(); !api.ok()) {
    return api.status();
  }
  static const Loaded* loaded = Load();
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

}  // namespace tessel::profiler
