#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "jit/launch.h"

namespace tessel::jit {
namespace {

TEST(KernelArgsTest, RecordsKindsSizesAndValues) {
  float* device_pointer = reinterpret_cast<float*>(0x1000);
  KernelArgs args;
  args.AddPointer(device_pointer)
      .AddPointer(CUdeviceptr{0x2000})
      .Add(2.5f)
      .Add(int32_t{-7})
      .Add(int64_t{1} << 40)
      .Add(0.25);
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args.spec(0), ArgSpec::Pointer());
  EXPECT_EQ(args.spec(1), ArgSpec::Pointer());
  EXPECT_EQ(args.spec(2), ArgSpec::F32());
  EXPECT_EQ(args.spec(3), ArgSpec::I32());
  EXPECT_EQ(args.spec(4), ArgSpec::I64());
  EXPECT_EQ(args.spec(5), ArgSpec::F64());
  CUdeviceptr p;
  std::memcpy(&p, args.value(0), 8);
  EXPECT_EQ(p, 0x1000u);
  float f;
  std::memcpy(&f, args.value(2), 4);
  EXPECT_EQ(f, 2.5f);
  int32_t i;
  std::memcpy(&i, args.value(3), 4);
  EXPECT_EQ(i, -7);
  int64_t l;
  std::memcpy(&l, args.value(4), 8);
  EXPECT_EQ(l, int64_t{1} << 40);
}

TEST(KernelArgsTest, ByValueStructs) {
  struct alignas(64) Descriptor {
    unsigned char bytes[128];
  } descriptor;
  for (int i = 0; i < 128; ++i)
    descriptor.bytes[i] = static_cast<unsigned char>(i);
  KernelArgs args;
  args.Add(1).AddBytes(&descriptor, sizeof(descriptor));
  EXPECT_EQ(args.spec(1), ArgSpec::Bytes(128));
  EXPECT_EQ(std::memcmp(args.value(1), descriptor.bytes, 128), 0);
}

TEST(KernelArgsTest, SpecNames) {
  EXPECT_EQ(ArgSpecName(ArgSpec::Pointer()), "ptr");
  EXPECT_EQ(ArgSpecName(ArgSpec::I32()), "i32");
  EXPECT_EQ(ArgSpecName(ArgSpec::F64()), "f64");
  EXPECT_EQ(ArgSpecName(ArgSpec::Bytes(128)), "bytes[128]");
}

TEST(LoadedKernelTest, UnloadedKernelRefusesToLaunch) {
  LoadedKernel kernel;
  EXPECT_FALSE(kernel.valid());
  EXPECT_EQ(kernel.Launch({}, KernelArgs()).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tessel::jit
