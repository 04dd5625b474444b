// Needs a GPU (ctest label `gpu`): launch() runs in the caller's CUDA
// context. Each test makes contexts of its own on device 0 (cuCtxCreate, as
// a host application with its own context does) or takes device 1's primary
// context where there is a second GPU, allocates there, launches a compiled
// kernel and checks the result. Memory of one context is not addressable
// from another, so a launch in the wrong context faults instead of passing.
// Skips, saying why, without a driver or device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "jit/context.h"
#include "jit/counters.h"
#include "jit/driver_api.h"
#include "tessel/compile.h"
#include "tessel/device.h"
#include "tessel/runtime.h"
#include "tessel/testing.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

constexpr int kN = 4096;  // Elementwise: Y = 2 X + 1, f32[kN]

// A context of its own on `device`, not current once made; destroyed at the
// end of the scope.
class OwnContext {
 public:
  OwnContext(const jit::DriverApi& cu, CUdevice device) : cu_(cu) {
    status_ = TESSEL_CU_CALL(cu, cuCtxCreate(&context_, nullptr, 0, device));
    if (status_.ok()) {
      CUcontext popped = nullptr;  // cuCtxCreate pushed it: pop it
      status_ = TESSEL_CU_CALL(cu, cuCtxPopCurrent(&popped));
    }
  }
  ~OwnContext() {
    if (context_ != nullptr) cu_.cuCtxDestroy(context_);
  }
  OwnContext(const OwnContext&) = delete;
  OwnContext& operator=(const OwnContext&) = delete;

  CUcontext get() const { return context_; }
  const absl::Status& status() const { return status_; }

 private:
  const jit::DriverApi& cu_;
  CUcontext context_ = nullptr;
  absl::Status status_;
};

// X and Y allocated through the driver in whichever context is current.
struct Buffers {
  CUdeviceptr x = 0, y = 0;
};

class ContextGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSEL_SKIP_WITHOUT_GPU();  // fails instead with TESSEL_REQUIRE_GPU=1
    absl::StatusOr<const jit::DriverApi*> api = jit::Driver();
    ASSERT_TRUE(api.ok()) << api.status();
    cu_ = *api;
    if (cu_->cuCtxCreate == nullptr || cu_->cuCtxDestroy == nullptr) {
      GTEST_SKIP() << "the driver lacks cuCtxCreate_v4 (CUDA 12.5+)";
    }
    ASSERT_TRUE(cu_->cuCtxGetCurrent(&saved_) == CUDA_SUCCESS);
    // Compiled once, for device 0's arch, in no particular context.
    absl::StatusOr<CompiledKernel> k = compile(testing::Elementwise(kN), {});
    ASSERT_TRUE(k.ok()) << k.status();
    kernel_ = *k;
  }
  void TearDown() override {
    if (cu_ != nullptr) cu_->cuCtxSetCurrent(saved_);
  }

  void MakeCurrent(CUcontext context) {
    ASSERT_TRUE(cu_->cuCtxSetCurrent(context) == CUDA_SUCCESS);
  }

  // Allocates X (filled with `seed + i`) and Y in the current context.
  Buffers Allocate(float seed) {
    Buffers b;
    EXPECT_TRUE(cu_->cuMemAlloc(&b.x, kN * 4) == CUDA_SUCCESS);
    EXPECT_TRUE(cu_->cuMemAlloc(&b.y, kN * 4) == CUDA_SUCCESS);
    std::vector<float> x(kN);
    for (int i = 0; i < kN; ++i) x[i] = seed + static_cast<float>(i);
    EXPECT_TRUE(cu_->cuMemcpyHtoD(b.x, x.data(), kN * 4) == CUDA_SUCCESS);
    EXPECT_TRUE(cu_->cuMemsetD8(b.y, 0, kN * 4) == CUDA_SUCCESS);
    return b;
  }

  // Launches on `b` from the current context (on `stream`) and waits.
  void Launch(const Buffers& b, CUstream stream = nullptr) {
    absl::Status s = kernel_.launch({TensorView::Contiguous(b.x, f32, {kN}),
                                     TensorView::Contiguous(b.y, f32, {kN})},
                                    reinterpret_cast<CUstream_st*>(stream));
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(cu_->cuStreamSynchronize(stream) == CUDA_SUCCESS);
  }

  // Reads Y back (from the buffers' context, current) and checks it.
  void Check(const Buffers& b, float seed) {
    std::vector<float> y(kN);
    ASSERT_TRUE(cu_->cuMemcpyDtoH(y.data(), b.y, kN * 4) == CUDA_SUCCESS);
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(y[i], 2.0f * (seed + static_cast<float>(i)) + 1.0f)
          << "at " << i;
    }
  }

  void LaunchAndCheck(const Buffers& b, float seed) {
    Launch(b);
    Check(b, seed);
  }

  void Free(const Buffers& b) {
    cu_->cuMemFree(b.x);
    cu_->cuMemFree(b.y);
  }

  CUdevice Device(int ordinal) {
    CUdevice d = 0;
    EXPECT_TRUE(cu_->cuDeviceGet(&d, ordinal) == CUDA_SUCCESS);
    return d;
  }

  const jit::DriverApi* cu_ = nullptr;
  CUcontext saved_ = nullptr;
  CompiledKernel kernel_;
};

TEST_F(ContextGpuTest, LaunchesInTheCurrentContext) {
  OwnContext own(*cu_, Device(0));
  ASSERT_TRUE(own.status().ok()) << own.status();
  MakeCurrent(own.get());
  const uint64_t loads = jit::GetJitCounters().module_loads;
  Buffers b = Allocate(1.0f);
  LaunchAndCheck(b, 1.0f);
  LaunchAndCheck(b, 1.0f);
  // Loaded into this context once, reused by the second launch.
  EXPECT_EQ(jit::GetJitCounters().module_loads, loads + 1);
  Free(b);
}

TEST_F(ContextGpuTest, TwoContextsAlternately) {
  OwnContext first(*cu_, Device(0)), second(*cu_, Device(0));
  ASSERT_TRUE(first.status().ok()) << first.status();
  ASSERT_TRUE(second.status().ok()) << second.status();
  MakeCurrent(first.get());
  Buffers a = Allocate(10.0f);
  MakeCurrent(second.get());
  Buffers b = Allocate(-3.0f);
  const uint64_t loads = jit::GetJitCounters().module_loads;
  for (int round = 0; round < 3; ++round) {
    MakeCurrent(first.get());
    LaunchAndCheck(a, 10.0f);
    MakeCurrent(second.get());
    LaunchAndCheck(b, -3.0f);
  }
  EXPECT_EQ(jit::GetJitCounters().module_loads, loads + 2);
  MakeCurrent(first.get());
  Free(a);
  MakeCurrent(second.get());
  Free(b);
}

// A stream of another context than the current one: the launch goes to the
// stream's context.
TEST_F(ContextGpuTest, LaunchesInTheStreamsContext) {
  OwnContext own(*cu_, Device(0));
  ASSERT_TRUE(own.status().ok()) << own.status();
  MakeCurrent(own.get());
  Buffers b = Allocate(5.0f);
  CUstream stream = nullptr;
  ASSERT_TRUE(cu_->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) ==
              CUDA_SUCCESS);
  absl::StatusOr<CUcontext> primary = jit::PrimaryContext(0);
  ASSERT_TRUE(primary.ok());
  MakeCurrent(*primary);
  Launch(b, stream);
  MakeCurrent(own.get());
  Check(b, 5.0f);
  cu_->cuStreamDestroy(stream);
  Free(b);
}

// A context destroyed and another made (the driver may hand out the same
// handle): the new one gets a module of its own, not the dead one's.
TEST_F(ContextGpuTest, ANewContextAfterADestroyedOne) {
  for (int i = 0; i < 2; ++i) {
    OwnContext own(*cu_, Device(0));
    ASSERT_TRUE(own.status().ok()) << own.status();
    MakeCurrent(own.get());
    const uint64_t loads = jit::GetJitCounters().module_loads;
    Buffers b = Allocate(static_cast<float>(i));
    LaunchAndCheck(b, static_cast<float>(i));
    EXPECT_EQ(jit::GetJitCounters().module_loads, loads + 1);
    Free(b);
    MakeCurrent(nullptr);
  }
}

// The public device API follows the current context too: DeviceMemory
// allocated while the context is current, launched and read back there.
TEST_F(ContextGpuTest, DeviceMemoryFollowsTheCurrentContext) {
  OwnContext own(*cu_, Device(0));
  ASSERT_TRUE(own.status().ok()) << own.status();
  MakeCurrent(own.get());
  absl::StatusOr<DeviceMemory> x = DeviceMemory::Allocate(kN * 4);
  absl::StatusOr<DeviceMemory> y = DeviceMemory::Allocate(kN * 4);
  ASSERT_TRUE(x.ok() && y.ok()) << x.status() << y.status();
  std::vector<float> host(kN, 4.0f);
  ASSERT_TRUE(x->CopyFromHost(host.data(), kN * 4).ok());
  ASSERT_TRUE(kernel_
                  .launch({TensorView::Contiguous(x->ptr(), f32, {kN}),
                           TensorView::Contiguous(y->ptr(), f32, {kN})})
                  .ok());
  ASSERT_TRUE(Synchronize().ok());
  // Read back with the primary context current: the copy goes to the
  // memory's own context.
  absl::StatusOr<CUcontext> primary = jit::PrimaryContext(0);
  ASSERT_TRUE(primary.ok());
  MakeCurrent(*primary);
  ASSERT_TRUE(y->CopyToHost(host.data(), kN * 4).ok());
  for (int i = 0; i < kN; ++i) ASSERT_EQ(host[i], 9.0f) << "at " << i;
  MakeCurrent(own.get());
  *x = DeviceMemory();
  *y = DeviceMemory();
}

// The public device API end to end: DeviceTensor up and down, a Stream of
// an own context, launch on it.
TEST_F(ContextGpuTest, DeviceTensorAndStream) {
  OwnContext own(*cu_, Device(0));
  ASSERT_TRUE(own.status().ok()) << own.status();
  MakeCurrent(own.get());
  {
    HostTensor x(f32, {kN});
    for (int i = 0; i < kN; ++i) x.set_flat(i, i % 7);
    absl::StatusOr<DeviceTensor> dx = DeviceTensor::FromHost(x);
    absl::StatusOr<DeviceTensor> dy = DeviceTensor::Allocate(f32, {kN});
    absl::StatusOr<Stream> stream = Stream::Create();
    ASSERT_TRUE(dx.ok() && dy.ok() && stream.ok())
        << dx.status() << dy.status() << stream.status();
    ASSERT_TRUE(kernel_.launch({dx->view(), dy->view()}, stream->get()).ok());
    ASSERT_TRUE(stream->Synchronize().ok());
    absl::StatusOr<HostTensor> y = dy->Download();
    ASSERT_TRUE(y.ok()) << y.status();
    for (int i = 0; i < kN; ++i) ASSERT_EQ(y->get_flat(i), 2 * (i % 7) + 1);
  }  // freed in `own`, before it is destroyed
}

// A second GPU, where there is one: its primary context made current (as
// cudaSetDevice(1) does) runs the kernel there.
TEST_F(ContextGpuTest, SecondDevice) {
  int count = 0;
  ASSERT_TRUE(cu_->cuDeviceGetCount(&count) == CUDA_SUCCESS);
  if (count < 2) GTEST_SKIP() << "one CUDA device";
  absl::StatusOr<CUcontext> one = jit::PrimaryContext(1);
  ASSERT_TRUE(one.ok()) << one.status();
  MakeCurrent(*one);
  absl::StatusOr<DeviceInfo> info = GetDeviceInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  if (info->arch != kernel_.arch()) {
    GTEST_SKIP() << "device 1 is " << info->arch << ", device 0 "
                 << kernel_.arch();
  }
  const uint64_t loads = jit::GetJitCounters().module_loads;
  Buffers b = Allocate(7.0f);
  LaunchAndCheck(b, 7.0f);
  EXPECT_EQ(jit::GetJitCounters().module_loads, loads + 1);
  Free(b);
}

}  // namespace
}  // namespace tessel
