// Why a test cannot use the GPU, for TESSEL_SKIP_WITHOUT_GPU.
#include <cstdlib>
#include <string>

#include "tessel/device.h"
#include "tessel/testing.h"

namespace tessel::testing {

std::string GpuUnavailableReason() { return ::tessel::GpuUnavailableReason(); }

bool GpuRequired() {
  const char* env = std::getenv("TESSEL_REQUIRE_GPU");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

}  // namespace tessel::testing
