// Helpers shared by the jit suites: temp folders (tests/common) and small
// kernels.
#ifndef TESSEL_TESTS_JIT_TEST_UTIL_H_
#define TESSEL_TESTS_JIT_TEST_UTIL_H_

#include <string>

#include "jit/nvrtc.h"
#include "tests/common/temp_dir.h"

namespace tessel::jit::testing {

using test_common::FilesUnder;
using test_common::ReadFile;
using test_common::TempDir;
using test_common::WriteFile;

inline CudaSource SaxpySource(const std::string& tag = "") {
  return CudaSource{
      .text = "// " + tag +
              "\n"
              "extern \"C\" __global__ void saxpy(const float* x, float* y,\n"
              "                                   float a, int n) {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i < n) y[i] = a * x[i] + y[i];\n"
              "}\n",
      .entry = "saxpy"};
}

}  // namespace tessel::jit::testing

#endif  // TESSEL_TESTS_JIT_TEST_UTIL_H_
