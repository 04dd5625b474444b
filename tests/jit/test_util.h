// Helpers shared by the jit suites: temp folders (tests/common) and small
// kernels.
#ifndef TESSEL_TESTS_JIT_TEST_UTIL_H_
#define TESSEL_TESTS_JIT_TEST_UTIL_H_

#include <cstdlib>
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

// A hand-written PTX module: add1(float* x) does x[0] += 1. Its .target is
// `arch` (ptxas refuses a module whose target is above the one compiled for).
inline CudaSource Add1Ptx(const std::string& arch = "sm_90a") {
  return CudaSource{.text =
                        ".version 8.0\n"
                        ".target " +
                        arch +
                        "\n"
                        ".address_size 64\n"
                        ".visible .entry add1(.param .u64 x) {\n"
                        "  .reg .b64 %rd<3>; .reg .f32 %f<3>;\n"
                        "  ld.param.u64 %rd1, [x];\n"
                        "  cvta.to.global.u64 %rd2, %rd1;\n"
                        "  ld.global.f32 %f1, [%rd2];\n"
                        "  add.f32 %f2, %f1, 0f3F800000;\n"
                        "  st.global.f32 [%rd2], %f2;\n"
                        "  ret;\n"
                        "}\n",
                    .entry = "add1",
                    .language = SourceLanguage::kPtx};
}

// Sets an environment variable (nullptr: unsets it) and restores it at scope
// exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace tessel::jit::testing

#endif  // TESSEL_TESTS_JIT_TEST_UTIL_H_
