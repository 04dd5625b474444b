// jit/subprocess.h: the child process the isolated compile and
// tessel-warmup share.
#include "jit/subprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
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

TEST(RunProgram, CollectsStdoutAndStderrAndTheExitStatus) {
  absl::StatusOr<ProgramRun> run =
      RunProgram({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "out\nerr\n");
  ASSERT_TRUE(WIFEXITED(run->wait_status));
  EXPECT_EQ(WEXITSTATUS(run->wait_status), 3);
}

TEST(RunProgram, ArgumentsAreNotShellWords) {
  absl::StatusOr<ProgramRun> run =
      RunProgram({"/bin/echo", "a b", "$HOME", "*", ";", "x"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "a b $HOME * ; x\n");
}

TEST(RunProgram, StdinIsEmpty) {
  absl::StatusOr<ProgramRun> run = RunProgram({"/bin/sh", "-c", "cat"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "");
  EXPECT_TRUE(WIFEXITED(run->wait_status));
}

TEST(RunProgram, AKillIsASignal) {
  absl::StatusOr<ProgramRun> run =
      RunProgram({"/bin/sh", "-c", "echo partial; kill -SEGV $$"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "partial\n");
  ASSERT_TRUE(WIFSIGNALED(run->wait_status));
  EXPECT_EQ(WTERMSIG(run->wait_status), SIGSEGV);
}

TEST(RunProgram, AMissingProgramIsFailedPrecondition) {
  absl::StatusOr<ProgramRun> run = RunProgram({"/nonexistent/ptxas", "-v"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(run.status().message().find("/nonexistent/ptxas"),
            std::string::npos);
  EXPECT_EQ(RunProgram({}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Each run closes what it opened: the process's descriptors are as before.
TEST(RunProgram, LeaksNoDescriptor) {
  auto count_fds = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/fd")) {
      ++n;
    }
    return n;
  };
  ASSERT_TRUE(RunProgram({"/bin/true"}).ok());  // any lazy setup done
  const int before = count_fds();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(RunProgram({"/bin/true"}).ok());
    ASSERT_FALSE(RunProgram({"/nonexistent"}).ok());
  }
  EXPECT_EQ(count_fds(), before);
}

}  // namespace
}  // namespace tessel::jit
