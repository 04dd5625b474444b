#include "jit/isolated_compile.h"

#include <poll.h>
#include <signal.h>
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
#include "absl/strings/string_view.h"
#include "jit/counters.h"
#include "jit/subprocess.h"

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

void RunChild(int fd, const CudaSource& source, const CompileOptions& options) {
  if (void (*hook)() = g_child_hook.load(); hook != nullptr) hook();
  WriteAll(fd, Encode(internal::CompileInChild(source, options)));
}

}  // namespace

absl::StatusOr<Cubin> CompileIsolated(const CudaSource& source,
                                      const CompileOptions& options,
                                      absl::Duration timeout) {
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  CompileOptions resolved = options;
  resolved.arch = *arch;

  internal::LockCompilesForFork();
  absl::StatusOr<Child> child =
      StartChild([&](int fd) { RunChild(fd, source, resolved); });
  internal::UnlockCompilesForFork();
  if (!child.ok()) {
    return absl::Status(
        child.status().code(),
        absl::StrCat("isolated compile: ", child.status().message()));
  }

  std::string reply;
  bool timed_out = false;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{child->fd, POLLIN, 0};
    const int ready =
        poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    if (ReadSome(child->fd, &reply) == ReadResult::kClosed) break;
  }
  close(child->fd);
  if (timed_out) kill(child->pid, SIGKILL);
  const int wstatus = Reap(child->pid);
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
                     " was killed by ", SignalText(WTERMSIG(wstatus))));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::InternalError(
        absl::StrCat("the isolated compile of ", what, " exited with status ",
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1));
  }
  absl::StatusOr<Cubin> result = Decode(reply);
  // The child ran NVRTC (ptxas for PTX) unless it failed before (e.g. a bad
  // entry). The child's source is the parent's, language and all: fork()
  // copies it.
  if (result.ok() ||
      absl::StrContains(result.status().message(), "NVRTC could not compile") ||
      absl::StrContains(result.status().message(), "ptxas could not compile")) {
    internal::Count(internal::Counter::kNvrtcCompiles);
  }
  return result;
}

namespace internal {
void SetIsolatedChildHookForTesting(void (*hook)()) { g_child_hook = hook; }
}  // namespace internal

}  // namespace tessel::jit
