// A child process that reports to its parent through a pipe: the isolated
// compile (a compiler crash becomes a Status) and tessel-warmup's compile
// jobs share it. RunProgram runs another program (ptxas) and collects what it
// prints.
//
//   absl::StatusOr<Child> child = StartChild([&](int fd) {
//     WriteAll(fd, Work());   // in the child; it _exit(0)s after
//   });
//   std::string reply;
//   while (ReadSome(child->fd, &reply) != ReadResult::kClosed) {}
//   close(child->fd);
//   int status = Reap(child->pid);   // WIFEXITED(status), ...
#ifndef TESSEL_JIT_SUBPROCESS_H_
#define TESSEL_JIT_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel::jit {

struct Child {
  pid_t pid = -1;
  int fd = -1;  // the read end of the child's pipe (close-on-exec)
};

// Forks. The child closes the read end, runs `body` with the write end and
// _exit(0)s: no atexit handlers, static destructors or sanitizer leak pass.
// Errors: Internal "pipe failed: ...", ResourceExhausted "fork failed: ...".
// Flush stdio first, or the child inherits (and repeats) what is buffered.
absl::StatusOr<Child> StartChild(absl::FunctionRef<void(int fd)> body);

enum class ReadResult { kData, kRetry, kClosed };
// One read() appended to *out: kRetry on EINTR, kClosed at end of file (the
// child is done or dead) or on an error.
ReadResult ReadSome(int fd, std::string* out);

// Writes all of `data` (retrying on EINTR); false when the pipe fails.
bool WriteAll(int fd, absl::string_view data);

// waitpid() until it returns (retrying on EINTR); the wait status.
int Reap(pid_t pid);

struct ProgramRun {
  int wait_status = 0;  // waitpid's: WIFEXITED(wait_status), ...
  std::string output;   // stdout and stderr, interleaved as written
};

// Runs argv[0] (a path: no shell, no $PATH search) with argv and this
// process's environment, stdin from /dev/null and stdout and stderr into one
// pipe; reads the pipe to its end and reaps the program (no zombie). Uses
// posix_spawn (vfork and exec: nothing of this process is copied into the
// program), the signal mask emptied and SIGPIPE at its default. Thread-safe:
// the pipe is close-on-exec, so a program another thread starts does not
// hold it open (a child another thread forks without exec while the pipe is
// being set up would, until it exits: the read waits for it). Errors (nothing
// ran): InvalidArgument for an empty argv, Internal "pipe failed: ...",
// FailedPrecondition "cannot run <path>: ..." (not found, not executable),
// ResourceExhausted when out of processes or memory.
absl::StatusOr<ProgramRun> RunProgram(const std::vector<std::string>& argv);

// "signal 11 (SIGSEGV: Segmentation fault)".
std::string SignalText(int sig);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_SUBPROCESS_H_
