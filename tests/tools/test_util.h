// Helpers of the tools suites: temp folders and files (tests/common), child
// processes.
#ifndef TESSEL_TESTS_TOOLS_TEST_UTIL_H_
#define TESSEL_TESTS_TOOLS_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace tessel::tools::testing {

using test_common::FilesUnder;
using test_common::ReadFile;
using test_common::TempDir;
using test_common::WriteFile;

// Temp files (".<name>.tmp.<pid>.<n>") and lock files left in a cache.
inline std::vector<std::string> LeftoversUnder(const std::string& dir) {
  std::vector<std::string> leftovers;
  for (const std::string& name : FilesUnder(dir)) {
    if (name.find(".tmp.") != std::string::npos ||
        (name.size() > 5 && name.substr(name.size() - 5) == ".lock")) {
      leftovers.push_back(name);
    }
  }
  return leftovers;
}

// A started child process whose stdout and stderr go to a file.
class Process {
 public:
  Process(std::vector<std::string> args, std::string output_path,
          std::vector<std::string> env = {})
      : output_path_(std::move(output_path)) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd =
          open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 1);
      dup2(fd, 2);
      for (std::string& e : env) putenv(e.data());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  // The exit code (128 + signal when killed).
  int Wait() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string Output() const { return ReadFile(output_path_); }

 private:
  pid_t pid_ = -1;
  std::string output_path_;
};

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline RunResult RunCommand(std::vector<std::string> args,
                            const TempDir& scratch,
                            std::vector<std::string> env = {}) {
  static int counter = 0;
  Process p(std::move(args), scratch / ("out" + std::to_string(counter++)),
            std::move(env));
  RunResult r;
  r.exit_code = p.Wait();
  r.output = p.Output();
  return r;
}

// The path of a file in the source tree.
inline std::string SourcePath(const std::string& relative) {
  const char* root = std::getenv("TESSEL_SOURCE_DIR");
  return (std::filesystem::path(root != nullptr ? root : TESSEL_SOURCE_DIR) /
          relative)
      .string();
}

}  // namespace tessel::tools::testing

#endif  // TESSEL_TESTS_TOOLS_TEST_UTIL_H_
