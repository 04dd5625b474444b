// DeviceTensor's checks that need no GPU: bad shapes and mismatched host
// tensors are InvalidArgument before any driver call; without a GPU,
// allocation says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessel/device.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

TEST(DeviceTensor, EmptyByDefault) {
  DeviceTensor t;
  EXPECT_EQ(t.ptr(), 0u);
  EXPECT_EQ(t.num_bytes(), 0u);
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.view().ToString(), "f32[0]");
}

TEST(DeviceTensor, NegativeShapeIsRefused) {
  absl::StatusOr<DeviceTensor> t = DeviceTensor::Allocate(f16, {4, -1});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("bad shape f16[4,-1]"));
}

TEST(DeviceTensor, MismatchedHostTensorIsRefused) {
  DeviceTensor t;
  HostTensor host(f16, {2, 3});
  absl::Status up = t.Upload(host);
  EXPECT_EQ(up.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(up.message(), HasSubstr("the device tensor is f32[0], the host "
                                      "tensor f16[2,3]"));
  EXPECT_EQ(t.Download(host).code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceTensor, WithoutAGpuAllocationSaysWhy) {
  if (GpuUnavailableReason().empty()) GTEST_SKIP() << "a GPU is present";
  absl::StatusOr<DeviceTensor> t = DeviceTensor::Allocate(f16, {4, 4});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Stream::Create().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessel
