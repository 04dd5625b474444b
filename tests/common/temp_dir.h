// Scratch folders and small file helpers shared by the test suites (jit,
// tools).
//
//   tessel::test_common::TempDir tmp;                 // removed at scope end
//   WriteFile(tmp / "a.txt", "bytes");
//   EXPECT_EQ(ReadFile(tmp / "a.txt"), "bytes");
//   std::vector<std::string> names = FilesUnder(tmp.path());  // {"a.txt"}
#ifndef TESSEL_TESTS_COMMON_TEMP_DIR_H_
#define TESSEL_TESTS_COMMON_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace tessel::test_common {

// A fresh private folder under the temp dir, removed with its contents at
// the end (even when a test took away its permissions).
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tessel-test-XXXXXX")
            .string();
    path_ = mkdtemp(pattern.data());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
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

// Every regular file under `dir` (names only), as far as it can be read.
inline std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) names.push_back(it->path().filename().string());
  }
  return names;
}

}  // namespace tessel::test_common

#endif  // TESSEL_TESTS_COMMON_TEMP_DIR_H_
