// Why a test cannot use the GPU, for TESSEL_SKIP_WITHOUT_GPU.
#include <cstdlib>
#include <string>

#include "jit/context.h"
#include "jit/driver_api.h"
#include "tessel/testing.h"

namespace tessel::testing {

std::string GpuUnavailableReason() {
  if (absl::StatusOr<const jit::DriverApi*> api = jit::Driver(); !api.ok()) {
    return std::string(api.status().message());
  }
  if (absl::StatusOr<CUcontext> context = jit::PrimaryContext(0);
      !context.ok()) {
    return std::string(context.status().message());
  }
  return "";
}

bool GpuRequired() {
  const char* env = std::getenv("TESSEL_REQUIRE_GPU");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

}  // namespace tessel::testing
