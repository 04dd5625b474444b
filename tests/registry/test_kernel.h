// A tiny element-wise program for the registry tests: Y = X * scale.
#ifndef TESSEL_TESTS_REGISTRY_TEST_KERNEL_H_
#define TESSEL_TESTS_REGISTRY_TEST_KERNEL_H_

#include "tessel/tessel.h"

namespace tessel::testing {

inline absl::StatusOr<Program> ScaleProgram(const std::string& name, int n,
                                            float scale) {
  namespace T = tessel;
  T::ProgramBuilder p(name);
  auto X = p.tensor("X", {n}, T::f32);
  auto Y = p.tensor("Y", {n}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(n, 256), {.threads = 128});
    auto [bx] = kernel.block_index();
    auto t = T::alloc_fragment({256}, T::f32, "t");
    T::copy(X(bx * 256), t);
    for (auto i : T::Parallel(256)) t(i) = t(i) * scale;
    T::copy(t, Y(bx * 256));
  }
  return p.finish();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_REGISTRY_TEST_KERNEL_H_
