// jit/subprocess.h: the child process the isolated compile and
// tessel-warmup share.
#include "jit/subprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace tessel::jit {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  while (ReadSome(fd, &out) != ReadResult::kClosed) {
  }
  return out;
}

TEST(Subprocess, TheChildsWritesReachTheParentAndItExitsCleanly) {
  absl::StatusOr<Child> child =
      StartChild([](int fd) { ASSERT_TRUE(WriteAll(fd, "hello, parent")); });
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(ReadAll(child->fd), "hello, parent");
  close(child->fd);
  const int status = Reap(child->pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Subprocess, ACrashIsASignalTheParentCanName) {
  absl::StatusOr<Child> child = StartChild([](int fd) {
    WriteAll(fd, "partial");
    raise(SIGKILL);
  });
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(ReadAll(child->fd), "partial");
  close(child->fd);
  const int status = Reap(child->pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(SignalText(WTERMSIG(status)), "signal 9 (SIGKILL: Killed)");
}

}  // namespace
}  // namespace tessel::jit
