// Without libcuda the library still loads, compiles, and every driver-backed
// call returns Unavailable. The loader is pointed at a library that does not
// exist, so this runs the same on machines with a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "jit/context.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "jit/event.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class NoDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    internal::ResetDriverForTesting("libtessel-no-such-driver.so.1");
  }
  void TearDown() override { internal::ResetDriverForTesting(""); }
};

void ExpectUnavailable(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

TEST_F(NoDriverTest, DriverIsUnavailableAndSaysWhy) {
  absl::StatusOr<const DriverApi*> api = Driver();
  ASSERT_FALSE(api.ok());
  ExpectUnavailable(api.status());
  EXPECT_THAT(api.status().message(),
              HasSubstr("libtessel-no-such-driver.so.1"));
  EXPECT_THAT(api.status().message(), HasSubstr("no CUDA driver"));
}

TEST_F(NoDriverTest, EveryDriverCallIsUnavailable) {
  ExpectUnavailable(PrimaryContext(0).status());
  ExpectUnavailable(DetectArch().status());
  ExpectUnavailable(DeviceBuffer::Allocate(1024).status());
  ExpectUnavailable(Event::Create().status());
  ExpectUnavailable(SynchronizeStream(nullptr));
  absl::StatusOr<Cubin> cubin =
      Compile(testing::SaxpySource(), {.arch = "sm_90a"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();  // NVRTC needs no driver
  ExpectUnavailable(LoadKernel(*cubin, {}).status());
}

TEST_F(NoDriverTest, CacheCompilesButCannotLoad) {
  testing::TempDir tmp;
  KernelCache cache({.disk = {.dir = tmp.path()}});
  EXPECT_TRUE(cache.GetCubin(testing::SaxpySource(), {.arch = "sm_80"}).ok());
  absl::StatusOr<CachedCubin> detect =
      cache.GetCubin(testing::SaxpySource(), {});
  ExpectUnavailable(detect.status());
  // In the words of tessel's users: a Target, or the tools' --arch.
  EXPECT_THAT(detect.status().message(), HasSubstr("Target::cuda(\"sm_90a\")"));
  EXPECT_THAT(detect.status().message(), HasSubstr("--arch"));
  EXPECT_THAT(detect.status().message(),
              Not(HasSubstr("CompileOptions::arch")));
  ExpectUnavailable(
      cache.GetKernel(testing::SaxpySource(), {.arch = "sm_80"}, {}).status());
}

TEST_F(NoDriverTest, EnvironmentPicksTheLibrary) {
  internal::ResetDriverForTesting("");
  setenv("TESSEL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  absl::StatusOr<const DriverApi*> api = Driver();
  unsetenv("TESSEL_LIBCUDA");
  ASSERT_FALSE(api.ok());
  EXPECT_THAT(api.status().message(), HasSubstr("/nonexistent/libcuda.so.1"));
}

}  // namespace
}  // namespace tessel::jit
