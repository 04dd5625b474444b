// A program of one kernel around a test's body: G, a global f32 [64, 64],
// and 128 threads. For verifier tests that only ask whether a body is
// accepted, and with which message it is refused.
#ifndef TESSEL_TESTS_COMMON_ONE_KERNEL_H_
#define TESSEL_TESTS_COMMON_ONE_KERNEL_H_

#include <functional>

#include "absl/status/status.h"
#include "tessel/tessel.h"

namespace tessel::testing {

inline absl::Status BuildOneKernel(
    const std::function<void(const tessel::Buffer& G)>& body) {
  tessel::ProgramBuilder p("test");
  auto G = p.tensor("G", {64, 64}, tessel::f32);
  {
    tessel::Kernel kernel(1, {.threads = 128});
    body(G);
  }
  return p.finish().status();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_COMMON_ONE_KERNEL_H_
