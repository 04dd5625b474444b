// Helpers shared by the jit suites: temp folders and small kernels.
#ifndef TESSEL_TESTS_JIT_TEST_UTIL_H_
#define TESSEL_TESTS_JIT_TEST_UTIL_H_

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jit/nvrtc.h"

namespace tessel::jit::testing {

// A fresh folder under the temp dir, removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tessel-jit-test-XXXXXX")
            .string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const {
    return (std::filesystem::path(path_) / name).string();
  }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// All regular files under `dir`, by name.
inline std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) names.push_back(it->path().filename().string());
  }
  return names;
}

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
