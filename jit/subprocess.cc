#include "jit/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

extern char** environ;

namespace tessel::jit {

absl::StatusOr<Child> StartChild(absl::FunctionRef<void(int fd)> body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("pipe failed: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    return absl::ResourceExhaustedError(
        absl::StrCat("fork failed: ", std::strerror(error)));
  }
  return Child{.pid = pid, .fd = fds[0]};
}

ReadResult ReadSome(int fd, std::string* out) {
  char buffer[1 << 16];
  const ssize_t n = ::read(fd, buffer, sizeof(buffer));
  if (n < 0 && errno == EINTR) return ReadResult::kRetry;
  if (n <= 0) return ReadResult::kClosed;
  out->append(buffer, static_cast<size_t>(n));
  return ReadResult::kData;
}

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

namespace {

// posix_spawn's file actions and attributes, destroyed whatever happens.
class SpawnSetup {
 public:
  SpawnSetup() {
    actions_ok_ = posix_spawn_file_actions_init(&actions_) == 0;
    attr_ok_ = posix_spawnattr_init(&attr_) == 0;
  }
  ~SpawnSetup() {
    if (actions_ok_) posix_spawn_file_actions_destroy(&actions_);
    if (attr_ok_) posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // stdout and stderr to `out_fd`, stdin from /dev/null, no blocked signal,
  // SIGPIPE at its default. 0 or an errno value.
  int Prepare(int out_fd) {
    if (!actions_ok_ || !attr_ok_) return ENOMEM;
    // dup2 first: should `out_fd` be 0 (stdin was closed), /dev/null replaces
    // it only once copied. The copies lose close-on-exec; `out_fd` keeps it.
    int error = posix_spawn_file_actions_adddup2(&actions_, out_fd, 1);
    if (error == 0)
      error = posix_spawn_file_actions_adddup2(&actions_, out_fd, 2);
    if (error == 0) {
      error = posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null",
                                               O_RDONLY, 0);
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    if (error == 0) error = posix_spawnattr_setsigmask(&attr_, &none);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attr_, &defaults);
    if (error == 0) {
      error = posix_spawnattr_setflags(
          &attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    return error;
  }

  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attr() const { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
  bool actions_ok_ = false;
  bool attr_ok_ = false;
};

}  // namespace

absl::StatusOr<ProgramRun> RunProgram(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("RunProgram: empty argv");
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("pipe failed: ", std::strerror(errno)));
  }
  pid_t pid = -1;
  int error;
  {
    SpawnSetup setup;
    error = setup.Prepare(fds[1]);
    // posix_spawn reports a failed exec (ENOENT, EACCES, ...) itself.
    if (error == 0) {
      error = ::posix_spawn(&pid, argv[0].c_str(), setup.actions(),
                            setup.attr(), args.data(), environ);
    }
  }
  ::close(fds[1]);  // now only the program writes: its exit ends the read
  if (error != 0) {
    ::close(fds[0]);
    const std::string message =
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(error));
    if (error == EAGAIN || error == ENOMEM) {
      return absl::ResourceExhaustedError(message);
    }
    if (error == ENOENT || error == EACCES || error == ENOEXEC ||
        error == ENOTDIR || error == ELOOP || error == ENAMETOOLONG) {
      return absl::FailedPreconditionError(message);
    }
    return absl::InternalError(message);
  }
  ProgramRun run;
  while (ReadSome(fds[0], &run.output) != ReadResult::kClosed) {
  }
  ::close(fds[0]);
  run.wait_status = Reap(pid);
  return run;
}

std::string SignalText(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return absl::StrFormat("signal %d (SIG%s: %s)", sig,
                         abbrev != nullptr ? abbrev : "?",
                         text != nullptr ? text : "unknown");
}

}  // namespace tessel::jit
