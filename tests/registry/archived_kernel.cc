// Registered from a static library linked whole (see CMakeLists.txt).
#include "nlohmann/json.hpp"
#include "tessel/registry.h"
#include "tests/registry/test_kernel.h"

namespace {

absl::StatusOr<tessel::Program> MakeArchived(const nlohmann::json& json) {
  tessel::KernelParams params(json);
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 1 << 30);
  if (!n.ok()) return n.status();
  return tessel::testing::ScaleProgram("archived", static_cast<int>(*n), 2);
}

}  // namespace

TESSEL_REGISTER_KERNEL(archived_kernel, MakeArchived);
