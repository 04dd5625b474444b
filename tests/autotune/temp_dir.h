// A fresh private folder for a test, removed at the end.
//
//   TempDir dir;
//   std::string path = dir.path() + "/autotune";
#ifndef TESSEL_TESTS_AUTOTUNE_TEMP_DIR_H_
#define TESSEL_TESTS_AUTOTUNE_TEMP_DIR_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tessel::autotuner::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern =
        std::string(base != nullptr ? base : "/tmp") + "/tessel_tune_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tessel::autotuner::testing

#endif  // TESSEL_TESTS_AUTOTUNE_TEMP_DIR_H_
