#include "jit/isolated_compile.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "jit/counters.h"

namespace tessel::jit {
namespace {

std::atomic<void (*)()> g_child_hook{nullptr};

// The child's reply: a status code, then length-prefixed fields.
void PutField(std::string& out, absl::string_view field) {
  const uint64_t size = field.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof(size));
  out.append(field.data(), field.size());
}

bool GetField(absl::string_view& in, std::string& field) {
  uint64_t size;
  if (in.size() < sizeof(size)) return false;
  std::memcpy(&size, in.data(), sizeof(size));
  in.remove_prefix(sizeof(size));
  if (in.size() < size) return false;
  field = std::string(in.substr(0, size));
  in.remove_prefix(size);
  return true;
}

std::string Encode(const absl::StatusOr<Cubin>& result) {
  std::string out;
  PutField(out, absl::StrCat(static_cast<int>(result.status().code())));
  PutField(out, result.status().message());
  if (result.ok()) {
    PutField(out, result->image);
    PutField(out, result->lowered_entry);
    PutField(out, result->arch);
    PutField(out, result->log);
    PutField(out, absl::StrCat(result->compile_ms));
  }
  return out;
}

absl::StatusOr<Cubin> Decode(absl::string_view in) {
  std::string code, message;
  if (!GetField(in, code) || !GetField(in, message)) {
    return absl::InternalError("isolated compile: malformed reply");
  }
  const int status_code = std::atoi(code.c_str());
  if (status_code != 0) {
    return absl::Status(static_cast<absl::StatusCode>(status_code), message);
  }
  Cubin cubin;
  std::string ms;
  if (!GetField(in, cubin.image) || !GetField(in, cubin.lowered_entry) ||
      !GetField(in, cubin.arch) || !GetField(in, cubin.log) ||
      !GetField(in, ms)) {
    return absl::InternalError("isolated compile: truncated reply");
  }
  cubin.compile_ms = std::atof(ms.c_str());
  return cubin;
}

void WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

[[noreturn]] void RunChild(int fd, const CudaSource& source,
                           const CompileOptions& options) {
  if (void (*hook)() = g_child_hook.load(); hook != nullptr) hook();
  const std::string reply = Encode(internal::CompileInChild(source, options));
  WriteAll(fd, reply);
  close(fd);
  _exit(0);  // no atexit handlers, no sanitizer leak pass in the child
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return absl::StrFormat("signal %d (SIG%s: %s)", sig,
                         abbrev != nullptr ? abbrev : "?",
                         text != nullptr ? text : "unknown");
}

}  // namespace

absl::StatusOr<Cubin> CompileIsolated(const CudaSource& source,
                                      const CompileOptions& options,
                                      absl::Duration timeout) {
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  CompileOptions resolved = options;
  resolved.arch = *arch;

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("isolated compile: pipe failed: ", std::strerror(errno)));
  }
  internal::LockCompilesForFork();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], source, resolved);
  }
  internal::UnlockCompilesForFork();
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return absl::ResourceExhaustedError(
        absl::StrCat("isolated compile: fork failed: ", std::strerror(errno)));
  }

  std::string reply;
  bool timed_out = false;
  const absl::Time deadline = absl::Now() + timeout;
  char buffer[1 << 16];
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready =
        poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or dead)
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string what =
      absl::StrCat("kernel '", source.entry, "' for ", resolved.arch);
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("isolated compile of ", what, " took longer than ",
                     absl::FormatDuration(timeout), "; the child was killed"));
  }
  if (WIFSIGNALED(wstatus)) {
    return absl::InternalError(
        absl::StrCat("the compiler crashed: the isolated compile of ", what,
                     " was killed by ", SignalName(WTERMSIG(wstatus))));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::InternalError(
        absl::StrCat("the isolated compile of ", what, " exited with status ",
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1));
  }
  absl::StatusOr<Cubin> result = Decode(reply);
  // The child ran NVRTC unless it failed before (e.g. a bad entry).
  if (result.ok() ||
      absl::StrContains(result.status().message(), "NVRTC could not compile")) {
    internal::Count(internal::Counter::kNvrtcCompiles);
  }
  return result;
}

namespace internal {
void SetIsolatedChildHookForTesting(void (*hook)()) { g_child_hook = hook; }
}  // namespace internal

}  // namespace tessel::jit
