// Needs a GPU (ctest label `gpu`): strided TensorViews launched on the
// device against the interpreter given the same views on host copies of the
// same memory. Column slices keep vector and TMA copies (on sm_90a the
// tensor maps carry the strides); transposed views go one element at a
// time. Skips, saying why, without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/counters.h"
#include "tests/runtime/strided_programs.h"

namespace tessel::strided_test {
namespace {

class StridedViewGpu : public testing::GpuTest {
 public:
  // `host` on the device.
  DeviceMemory Upload(const HostTensor& host) {
    absl::StatusOr<DeviceMemory> d = DeviceMemory::Allocate(host.num_bytes());
    EXPECT_TRUE(d.ok()) << d.status();
    if (!d.ok()) return DeviceMemory();
    EXPECT_TRUE(d->CopyFromHost(host.data(), host.num_bytes()).ok());
    return *std::move(d);
  }
  HostTensor Download(const DeviceMemory& d, DataType dtype,
                      std::vector<int64_t> shape) {
    HostTensor host(dtype, std::move(shape));
    EXPECT_TRUE(Synchronize().ok());
    EXPECT_TRUE(d.CopyToHost(host.data(), host.num_bytes()).ok());
    return host;
  }
};

CompiledKernel Compile(const Program& program, const Target& target) {
  absl::StatusOr<CompiledKernel> k = compile(program, {.target = target});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel();
}

// C (columns [8, 8 + n) of a wider f32 output) = A B for the given A and B
// views of wide_a and wide_b, on the GPU and on the interpreter.
void CheckGemm(HostTensor wide_a, const View2& a, HostTensor wide_b,
               const View2& b, StridedViewGpu& t) {
  const int64_t m = a.shape[0], n = b.shape[1];
  HostTensor wide_c(f32, {m, n + 24});
  wide_c.fill(7.0);
  const View2 c = Columns(wide_c, 8, n);

  CompiledKernel gpu = Compile(Gemm(), Target::detect());
  ASSERT_TRUE(gpu.valid());
  ::testing::Test::RecordProperty("schedule",
                                  absl::StrJoin(gpu.schedule(), "; "));
  DeviceMemory da = t.Upload(wide_a), db = t.Upload(wide_b),
               dc = t.Upload(wide_c);
  absl::Status s =
      gpu.launch({ViewAt(da.ptr(), f16, a), ViewAt(db.ptr(), f16, b),
                  ViewAt(dc.ptr(), f32, c)});
  ASSERT_TRUE(s.ok()) << s;
  HostTensor from_gpu = t.Download(dc, f32, wide_c.shape());

  CompiledKernel cpu = Compile(Gemm(), Target::cpu());
  ASSERT_TRUE(cpu.launch({HostView(wide_a, a), HostView(wide_b, b),
                          HostView(wide_c, c)})
                  .ok());
  // Accumulation order differs; the untouched columns must match exactly.
  EXPECT_TRUE(testing::AllClose(from_gpu, wide_c, 1e-3, 1e-3));
  EXPECT_EQ(from_gpu.get_flat(0), 7.0);
  EXPECT_EQ(from_gpu.get_flat(8 + n), 7.0);
}

TEST_F(StridedViewGpu, GemmOfColumnSlices) {
  const int64_t m = 256, n = 192, k = 320;
  HostTensor wide_a = Random(f16, {m, k + 64}, 1);
  HostTensor wide_b = Random(f16, {k, n + 40}, 2);
  CheckGemm(wide_a, Columns(wide_a, 32, k), wide_b, Columns(wide_b, 16, n),
            *this);
}

TEST_F(StridedViewGpu, GemmOfAColumnSliceAndATransposedView) {
  const int64_t m = 200, n = 136, k = 264;  // ragged
  HostTensor wide_a = Random(f16, {m, k + 8}, 3);
  HostTensor b_t = Random(f16, {n, k}, 4);
  CheckGemm(wide_a, Columns(wide_a, 8, k), b_t, Transposed(b_t), *this);
}

// Another row stride reuses the variant: strides are kernel parameters.
TEST_F(StridedViewGpu, NewStridesNeedNoNewCompile) {
  CompiledKernel kernel = Compile(Scale(), Target::detect());
  for (int64_t width : {96, 160, 224}) {
    HostTensor wide_x = Random(f16, {100, width}, 5);
    HostTensor y(f32, {100, 72});
    const View2 x = Columns(wide_x, 16, 72);
    DeviceMemory dx = Upload(wide_x), dy = Upload(y);
    const uint64_t compiles = jit::GetJitCounters().nvrtc_compiles;
    ASSERT_TRUE(kernel
                    .launch({ViewAt(dx.ptr(), f16, x),
                             TensorView::Contiguous(dy.ptr(), f32, {100, 72})})
                    .ok());
    if (width != 96) EXPECT_EQ(jit::GetJitCounters().nvrtc_compiles, compiles);
    HostTensor from_gpu = Download(dy, f32, {100, 72});
    HostTensor x_copy = Gather(wide_x, x);
    for (int64_t i = 0; i < 100 * 72; ++i) {
      ASSERT_EQ(from_gpu.get_flat(i), 2 * x_copy.get_flat(i) + 1) << i;
    }
  }
}

TEST_F(StridedViewGpu, ElementwiseOfATransposedViewIntoATransposedView) {
  CompiledKernel kernel = Compile(Scale(), Target::detect());
  HostTensor x_t = Random(f16, {70, 45}, 6);  // X = x_t^T: [45, 70]
  HostTensor y_t(f32, {70, 45});              // Y = y_t^T
  DeviceMemory dx = Upload(x_t), dy = Upload(y_t);
  ASSERT_TRUE(kernel
                  .launch({ViewAt(dx.ptr(), f16, Transposed(x_t)),
                           ViewAt(dy.ptr(), f32, Transposed(y_t))})
                  .ok());
  HostTensor from_gpu = Download(dy, f32, {70, 45});
  for (int64_t i = 0; i < 70 * 45; ++i) {
    ASSERT_EQ(from_gpu.get_flat(i), 2 * x_t.get_flat(i) + 1) << i;
  }
}

// Symbolic sizes whose rows are not whole vectors (N = 243 f16), and an
// input view starting two elements past an aligned address: views that run
// element by element instead of being refused.
TEST_F(StridedViewGpu, UnalignedViewsRun) {
  CompiledKernel kernel = Compile(Scale(), Target::detect());
  for (int64_t n : {243, 256}) {
    for (int64_t offset : {0, 2}) {
      SCOPED_TRACE(absl::StrCat("N = ", n, ", offset ", offset));
      const int64_t row = n + offset;
      HostTensor x = Random(f16, {37, row}, 7);
      HostTensor y(f32, {37, n});
      DeviceMemory dx = Upload(x), dy = Upload(y);
      const TensorView xv =
          offset == 0
              ? TensorView::Contiguous(dx.ptr(), f16, {37, n})
              : TensorView{dx.ptr() + 2 * offset, f16, {37, n}, {row, 1}};
      absl::Status s =
          kernel.launch({xv, TensorView::Contiguous(dy.ptr(), f32, {37, n})});
      ASSERT_TRUE(s.ok()) << s;
      HostTensor from_gpu = Download(dy, f32, {37, n});
      for (int64_t i = 0; i < 37; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(from_gpu.get_flat(i * n + j),
                    2 * x.get_flat(i * row + j + offset) + 1)
              << i << ", " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessel::strided_test
