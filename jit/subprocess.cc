#include "jit/subprocess.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

std::string SignalText(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return absl::StrFormat("signal %d (SIG%s: %s)", sig,
                         abbrev != nullptr ? abbrev : "?",
                         text != nullptr ? text : "unknown");
}

}  // namespace tessel::jit
