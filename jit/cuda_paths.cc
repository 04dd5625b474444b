#include "jit/cuda_paths.h"

#include <cstdlib>
#include <filesystem>

namespace tessel::jit {
namespace {

bool HasCudaHeaders(const std::filesystem::path& root) {
  std::error_code ec;
  return std::filesystem::exists(root / "include" / "cuda_fp16.h", ec);
}

}  // namespace

std::string CudaToolkitRoot() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0' && HasCudaHeaders(value)) {
      return value;
    }
  }
  // The build-time include dir is <root>/include (or a targets/ subfolder).
  std::filesystem::path built = TESSEL_CUDA_INCLUDE_DIR;
  for (std::filesystem::path p = built;
       p.has_parent_path() && p != p.root_path(); p = p.parent_path()) {
    if (HasCudaHeaders(p)) return p.string();
  }
  return "";
}

std::vector<std::string> CudaIncludeDirs() {
  std::vector<std::string> dirs;
  const std::string root = CudaToolkitRoot();
  if (root.empty()) return dirs;
  const std::filesystem::path include = std::filesystem::path(root) / "include";
  dirs.push_back(include.string());
  std::error_code ec;
  if (std::filesystem::is_directory(include / "cccl", ec)) {
    dirs.push_back((include / "cccl").string());
  }
  return dirs;
}

}  // namespace tessel::jit
