// Needs a GPU (ctest label `gpu`): compile, load, launch and check kernels.
// Skips, saying why, where there is no driver or device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

#include "jit/context.h"
#include "jit/counters.h"
#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "jit/event.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const KernelSignature kSaxpySignature = {ArgSpec::Pointer(), ArgSpec::Pointer(),
                                         ArgSpec::F32(), ArgSpec::I32()};

const CudaSource kReverseThroughSmem{
    .text =
        "extern \"C\" __global__ void reverse(const float* in, float* out,\n"
        "                                     int n) {\n"
        "  extern __shared__ float buffer[];\n"
        "  for (int i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = "
        "in[i];\n"
        "  __syncthreads();\n"
        "  for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
        "    out[i] = buffer[n - 1 - i];\n"
        "}\n",
    .entry = "reverse"};

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<const DriverApi*> api = Driver();
    if (!api.ok()) {
      GTEST_SKIP() << api.status().message();
    }
    absl::StatusOr<CUcontext> context = PrimaryContext(0);
    if (!context.ok()) {
      GTEST_SKIP() << "no CUDA device: " << context.status().message();
    }
    api_ = *api;
    context_ = *context;
    cache_ = std::make_unique<KernelCache>(
        KernelCacheOptions{.disk = {.dir = tmp_.path()}});
  }

  // Runs saxpy (y = a x + y) over n elements and checks the result.
  void RunSaxpy(const LoadedKernel& kernel, CUstream stream = nullptr,
                CUcontext context = nullptr) {
    constexpr int n = 1000;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 2.0f * static_cast<float>(i);
    }
    absl::StatusOr<DeviceBuffer> dx = DeviceBuffer::Allocate(n * 4, context);
    absl::StatusOr<DeviceBuffer> dy = DeviceBuffer::Allocate(n * 4, context);
    ASSERT_TRUE(dx.ok() && dy.ok()) << dx.status() << dy.status();
    ASSERT_TRUE(dx->CopyFromHost(x.data(), n * 4).ok());
    ASSERT_TRUE(dy->CopyFromHost(y.data(), n * 4).ok());
    KernelArgs args;
    args.AddPointer(dx->ptr()).AddPointer(dy->ptr()).Add(3.0f).Add(n);
    absl::Status launched = kernel.Launch(
        {.grid = {(n + 255) / 256}, .block = {256}, .stream = stream}, args);
    ASSERT_TRUE(launched.ok()) << launched;
    ASSERT_TRUE(SynchronizeStream(stream, context).ok());
    ASSERT_TRUE(dy->CopyToHost(y.data(), n * 4).ok());
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(y[i], 5.0f * static_cast<float>(i)) << "at " << i;
    }
  }

  testing::TempDir tmp_;
  const DriverApi* api_ = nullptr;
  CUcontext context_ = nullptr;
  std::unique_ptr<KernelCache> cache_;
};

TEST_F(GpuTest, DetectsTheArch) {
  absl::StatusOr<std::string> arch = DetectArch();
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_THAT(*arch, MatchesRegex("sm_[0-9]+a?"));
  absl::StatusOr<int> major =
      DeviceAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  absl::StatusOr<int> minor =
      DeviceAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  ASSERT_TRUE(major.ok() && minor.ok());
  if (*major == 9 && *minor == 0) {
    EXPECT_EQ(*arch, "sm_90a");
  }
}

TEST_F(GpuTest, SaxpyCompilesLoadsAndRuns) {
  absl::StatusOr<LoadedKernel> kernel =
      cache_->GetKernel(testing::SaxpySource("gpu"), {}, kSaxpySignature);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->entry(), "saxpy");
  EXPECT_GE(kernel->max_threads_per_block(), 256);
  RunSaxpy(*kernel);
}

TEST_F(GpuTest, DiskHitLoadsAndRuns) {
  ASSERT_TRUE(
      cache_->GetCubin(testing::SaxpySource("disk"), {.arch = ""}).ok());
  KernelCache fresh({.disk = {.dir = tmp_.path()}});
  const uint64_t compiles = GetJitCounters().nvrtc_compiles;
  absl::StatusOr<CachedCubin> cubin =
      fresh.GetCubin(testing::SaxpySource("disk"), {});
  ASSERT_TRUE(cubin.ok());
  EXPECT_EQ(cubin->origin, CubinOrigin::kDisk);
  absl::StatusOr<LoadedKernel> kernel = fresh.Load(*cubin, kSaxpySignature);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  RunSaxpy(*kernel);
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, compiles);
}

TEST_F(GpuTest, PtxKernelCompilesLoadsAndRuns) {
  absl::StatusOr<std::string> arch = ResolveArch({});
  ASSERT_TRUE(arch.ok()) << arch.status();
  absl::StatusOr<LoadedKernel> kernel = cache_->GetKernel(
      testing::Add1Ptx(*arch), {}, KernelSignature{ArgSpec::Pointer()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->entry(), "add1");
  const float start = 41.0f;
  absl::StatusOr<DeviceBuffer> x = DeviceBuffer::Allocate(sizeof(float));
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(x->CopyFromHost(&start, sizeof(float)).ok());
  KernelArgs args;
  args.AddPointer(x->ptr());
  absl::Status launched = kernel->Launch({.grid = {1}, .block = {1}}, args);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(SynchronizeStream(nullptr).ok());
  float result = 0;
  ASSERT_TRUE(x->CopyToHost(&result, sizeof(float)).ok());
  EXPECT_EQ(result, 42.0f);
}

TEST_F(GpuTest, ModulesAreCachedPerKeyAndContext) {
  const uint64_t loads = GetJitCounters().module_loads;
  absl::StatusOr<LoadedKernel> a =
      cache_->GetKernel(testing::SaxpySource("module"), {}, kSaxpySignature);
  absl::StatusOr<LoadedKernel> b =
      cache_->GetKernel(testing::SaxpySource("module"), {}, kSaxpySignature);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->function(), b->function());
  EXPECT_EQ(GetJitCounters().module_loads, loads + 1);
}

TEST_F(GpuTest, DynamicSharedMemoryAbove48KB) {
  constexpr int kBytes = 100 * 1024;
  constexpr int n = kBytes / 4;
  absl::StatusOr<LoadedKernel> kernel = cache_->GetKernel(
      kReverseThroughSmem, {},
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::I32()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  if (kernel->max_dynamic_smem_bytes() < kBytes) {
    GTEST_SKIP() << "the device allows only "
                 << kernel->max_dynamic_smem_bytes()
                 << " bytes of dynamic shared memory";
  }
  std::vector<float> in(n), out(n, -1.0f);
  std::iota(in.begin(), in.end(), 0.0f);
  absl::StatusOr<DeviceBuffer> din = DeviceBuffer::Allocate(kBytes);
  absl::StatusOr<DeviceBuffer> dout = DeviceBuffer::Allocate(kBytes);
  ASSERT_TRUE(din.ok() && dout.ok());
  ASSERT_TRUE(din->CopyFromHost(in.data(), kBytes).ok());
  KernelArgs args;
  args.AddPointer(din->ptr()).AddPointer(dout->ptr()).Add(n);
  absl::Status launched = kernel->Launch(
      {.grid = {1}, .block = {256}, .dynamic_smem_bytes = kBytes}, args);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(SynchronizeStream(nullptr).ok());
  ASSERT_TRUE(dout->CopyToHost(out.data(), kBytes).ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << i;
}

TEST_F(GpuTest, SharedMemoryOverTheDeviceLimitIsAStatus) {
  absl::StatusOr<LoadedKernel> kernel = cache_->GetKernel(
      kReverseThroughSmem, {},
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::I32()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  KernelArgs args;
  args.AddPointer(CUdeviceptr{0}).AddPointer(CUdeviceptr{0}).Add(0);
  absl::Status launched = kernel->Launch(
      {.grid = {1},
       .block = {32},
       .dynamic_smem_bytes =
           static_cast<uint32_t>(kernel->max_dynamic_smem_bytes()) + 1024},
      args);
  EXPECT_EQ(launched.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(launched.message(), HasSubstr("dynamic shared memory"));
}

TEST_F(GpuTest, BadLaunchConfigurationsAreStatuses) {
  absl::StatusOr<LoadedKernel> kernel =
      cache_->GetKernel(testing::SaxpySource("bad"), {}, kSaxpySignature);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  KernelArgs args;
  args.AddPointer(CUdeviceptr{0}).AddPointer(CUdeviceptr{0}).Add(1.0f).Add(0);

  absl::Status too_big = kernel->Launch({.grid = {1}, .block = {2048}}, args);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("2048 threads"));

  EXPECT_EQ(kernel->Launch({.grid = {0}, .block = {32}}, args).code(),
            absl::StatusCode::kInvalidArgument);

  KernelArgs three;
  three.AddPointer(CUdeviceptr{0}).AddPointer(CUdeviceptr{0}).Add(1.0f);
  absl::Status count = kernel->Launch({.grid = {1}, .block = {32}}, three);
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.message(), HasSubstr("takes 4 arguments, given 3"));

  KernelArgs wrong_type;
  wrong_type.AddPointer(CUdeviceptr{0})
      .AddPointer(CUdeviceptr{0})
      .Add(1.0)
      .Add(0);
  absl::Status type = kernel->Launch({.grid = {1}, .block = {32}}, wrong_type);
  EXPECT_EQ(type.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.message(), HasSubstr("argument 2: expected f32, given f64"));
}

TEST_F(GpuTest, SignatureIsCheckedAgainstTheKernelAtLoad) {
  if (api_->cuFuncGetParamInfo == nullptr) {
    GTEST_SKIP() << "the driver lacks cuFuncGetParamInfo";
  }
  absl::StatusOr<LoadedKernel> short_sig = cache_->GetKernel(
      testing::SaxpySource("sig"), {},
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::F32()});
  EXPECT_EQ(short_sig.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<LoadedKernel> wrong_size = cache_->GetKernel(
      testing::SaxpySource("sig"), {},
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::F64(), ArgSpec::I32()});
  EXPECT_EQ(wrong_size.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GpuTest, HostContextAndStream) {
  CUstream stream = nullptr;
  {
    ScopedContext current(*api_, context_);
    ASSERT_TRUE(current.status().ok());
    ASSERT_TRUE(
        TESSEL_CU_CALL(*api_, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
            .ok());
  }
  absl::StatusOr<LoadedKernel> kernel = cache_->GetKernel(
      testing::SaxpySource("stream"), {}, kSaxpySignature, context_);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->context(), context_);
  RunSaxpy(*kernel, stream, context_);
  ScopedContext current(*api_, context_);
  EXPECT_TRUE(TESSEL_CU_CALL(*api_, cuStreamDestroy(stream)).ok());
}

TEST_F(GpuTest, LaunchFromAThreadWithoutAContext) {
  absl::StatusOr<LoadedKernel> kernel =
      cache_->GetKernel(testing::SaxpySource("thread"), {}, kSaxpySignature);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::thread([&] { RunSaxpy(*kernel); }).join();
}

TEST_F(GpuTest, EventsTimeWork) {
  absl::StatusOr<LoadedKernel> kernel =
      cache_->GetKernel(testing::SaxpySource("events"), {}, kSaxpySignature);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  absl::StatusOr<Event> start = Event::Create();
  absl::StatusOr<Event> stop = Event::Create();
  ASSERT_TRUE(start.ok() && stop.ok()) << start.status();
  ASSERT_TRUE(start->Record().ok());
  RunSaxpy(*kernel);
  ASSERT_TRUE(stop->Record().ok());
  absl::StatusOr<float> ms = ElapsedMilliseconds(*start, *stop);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0f);
}

TEST_F(GpuTest, DriverErrorsNameTheCallAndTheError) {
  Cubin garbage{
      .image = std::string(256, 'x'), .lowered_entry = "k", .arch = "sm_90a"};
  absl::StatusOr<LoadedKernel> kernel = LoadKernel(garbage, {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(), HasSubstr("cuModuleLoadData"));
  EXPECT_THAT(kernel.status().message(), HasSubstr("CUDA_ERROR_"));
}

}  // namespace
}  // namespace tessel::jit
