// TESSEL_SKIP_WITHOUT_GPU and GpuTest agree with the driver, and say why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "jit/context.h"
#include "jit/driver_api.h"
#include "tessel/testing.h"

namespace tessel::testing {
namespace {

bool DeviceUsable() {
  return jit::Driver().ok() && jit::PrimaryContext(0).ok();
}

TEST(GpuUnavailableReason, EmptyExactlyWhenADeviceIsUsable) {
  EXPECT_EQ(GpuUnavailableReason().empty(), DeviceUsable())
      << GpuUnavailableReason();
}

TEST(GpuUnavailableReason, NamesTheMissingDriver) {
  jit::internal::ResetDriverForTesting("libtessel-no-such-driver.so.1");
  const std::string why = GpuUnavailableReason();
  jit::internal::ResetDriverForTesting("");
  EXPECT_THAT(why, ::testing::HasSubstr("libtessel-no-such-driver.so.1"));
}

TEST(GpuRequired, ReadsTheEnvironment) {
  const char* saved = std::getenv("TESSEL_REQUIRE_GPU");
  const std::string old = saved != nullptr ? saved : "";
  setenv("TESSEL_REQUIRE_GPU", "1", 1);
  EXPECT_TRUE(GpuRequired());
  setenv("TESSEL_REQUIRE_GPU", "0", 1);
  EXPECT_FALSE(GpuRequired());
  unsetenv("TESSEL_REQUIRE_GPU");
  EXPECT_FALSE(GpuRequired());
  if (saved != nullptr) setenv("TESSEL_REQUIRE_GPU", old.c_str(), 1);
}

// Uses the macro as a test body would; sets *ran only when not skipped.
void BodyWithSkip(bool* ran) {
  TESSEL_SKIP_WITHOUT_GPU();
  *ran = true;
}

// Without a GPU this test ends up skipped, but its checks still run (and
// would fail it): the macro must have skipped exactly then, saying why.
TEST(SkipWithoutGpu, SkipsExactlyWithoutADevice) {
  if (GpuRequired())
    GTEST_SKIP() << "TESSEL_REQUIRE_GPU turns skips into failures";
  bool ran = false;
  BodyWithSkip(&ran);
  EXPECT_EQ(ran, DeviceUsable());
  EXPECT_EQ(IsSkipped(), !DeviceUsable());
}

class FixtureSkips : public GpuTest {};

TEST_F(FixtureSkips, BodyRunsOnlyWithADevice) {
  EXPECT_TRUE(DeviceUsable());  // a failure here means SetUp did not skip
}

}  // namespace
}  // namespace tessel::testing
