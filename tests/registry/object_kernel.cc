// Registered from an OBJECT library (see CMakeLists.txt).
#include "nlohmann/json.hpp"
#include "tessel/registry.h"
#include "tests/registry/test_kernel.h"

namespace {

absl::StatusOr<tessel::Program> MakeObject(const nlohmann::json& json) {
  tessel::KernelParams params(json);
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 1 << 30);
  if (!n.ok()) return n.status();
  return tessel::testing::ScaleProgram("object", static_cast<int>(*n), 3);
}

}  // namespace

TESSEL_REGISTER_KERNEL(object_kernel, MakeObject);
