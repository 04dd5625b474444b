// Programs and host-side helpers of the strided-view tests (CPU and GPU): a
// gemm and an element-wise kernel with symbolic sizes, and views of part of
// a larger row-major host tensor (a slice of columns, a transpose).
#ifndef TESSEL_TESTS_RUNTIME_STRIDED_PROGRAMS_H_
#define TESSEL_TESTS_RUNTIME_STRIDED_PROGRAMS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tessel/tessel.h"
#include "tessel/testing.h"

namespace tessel::strided_test {

namespace T = tessel;

// C (f32) = A (f16) B (f16), M N K bound at launch; 64x64x32 tiles.
inline Program Gemm() {
  T::ProgramBuilder p("strided_gemm");
  T::Expr M = p.dim("M"), N = p.dim("N"), K = p.dim("K");
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(N, 64), T::ceildiv(M, 64), {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({64, 32}, T::f16, "A_shared");
    auto Bs = T::alloc_shared({32, 64}, T::f16, "B_shared");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::clear(acc);
    for (auto k : T::Pipelined(T::ceildiv(K, 32), {.num_stages = 2})) {
      T::copy(A(by * 64, k * 32), As);
      T::copy(B(k * 32, bx * 64), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C(by * 64, bx * 64));
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

// Y (f32) = 2 X (f16) + 1, M N bound at launch; 32x32 tiles through shared
// memory and a fragment.
inline Program Scale() {
  T::ProgramBuilder p("strided_scale");
  T::Expr M = p.dim("M"), N = p.dim("N");
  auto X = p.tensor("X", {M, N}, T::f16);
  auto Y = p.tensor("Y", {M, N}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(N, 32), T::ceildiv(M, 32), {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto Xs = T::alloc_shared({32, 32}, T::f16, "X_shared");
    auto f = T::alloc_fragment({32, 32}, T::f32, "f");
    T::copy(X(by * 32, bx * 32), Xs);
    T::copy(Xs, f);
    for (auto [i, j] : T::Parallel(32, 32)) f(i, j) = f(i, j) * 2.0f + 1.0f;
    T::copy(f, Y(by * 32, bx * 32));
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

inline HostTensor Random(DataType dtype, std::vector<int64_t> shape,
                         uint64_t seed) {
  absl::StatusOr<HostTensor> t = testing::RandomTensor(dtype, shape, seed);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : HostTensor();
}

// A rank-2 view of `base` (row-major storage) starting `offset` elements in.
struct View2 {
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
};

// Columns [c0, c0 + n) of a row-major [rows, width] tensor.
inline View2 Columns(const HostTensor& base, int64_t c0, int64_t n) {
  return {c0, {base.shape()[0], n}, {base.shape()[1], 1}};
}

// The transpose of a row-major [rows, cols] tensor: [cols, rows].
inline View2 Transposed(const HostTensor& base) {
  return {0, {base.shape()[1], base.shape()[0]}, {1, base.shape()[1]}};
}

// The view's elements as a row-major tensor of their own.
inline HostTensor Gather(const HostTensor& base, const View2& v) {
  HostTensor out(base.dtype(), v.shape);
  for (int64_t i = 0; i < v.shape[0]; ++i) {
    for (int64_t j = 0; j < v.shape[1]; ++j) {
      out.set_flat(
          i * v.shape[1] + j,
          base.get_flat(v.offset + i * v.strides[0] + j * v.strides[1]));
    }
  }
  return out;
}

// A TensorView of `v` at `data`, the address of base's first element (a host
// pointer for Target::cpu(), a device pointer for the GPU).
inline TensorView ViewAt(uint64_t data, DataType dtype, const View2& v) {
  return TensorView{data + static_cast<uint64_t>(v.offset) * dtype_bytes(dtype),
                    dtype, v.shape, v.strides};
}

inline TensorView HostView(HostTensor& base, const View2& v) {
  return ViewAt(reinterpret_cast<uintptr_t>(base.data()), base.dtype(), v);
}

inline TensorView Whole(HostTensor& t) {
  return TensorView::Contiguous(t.data(), t.dtype(), t.shape());
}

}  // namespace tessel::strided_test

#endif  // TESSEL_TESTS_RUNTIME_STRIDED_PROGRAMS_H_
