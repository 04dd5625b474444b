// File helpers shared by the kernel disk cache and the autotuner's store:
// private folders, a trust check on them, and whole-file reads and writes
// that never show a reader half a file.
//
//   RETURN_IF_ERROR(tessel::jit::MakePrivateDirs("/home/me/.cache/tessel/x"));
//   if (std::string why = tessel::jit::UnsafeFolderReason(dir); !why.empty())
//     ... do not read from it ...
//   int fd = OpenNoFollow(path);  then  UnsafeFileReason(fd, path)
//   RETURN_IF_ERROR(tessel::jit::WriteFileAtomically(path, bytes));
//   ASSIGN_OR_RETURN(std::string text, tessel::jit::ReadWholeFile(path));
#ifndef TESSEL_JIT_CACHE_FILES_H_
#define TESSEL_JIT_CACHE_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel::jit {

// Creates `dir` and its missing parents with mode 0700. FailedPrecondition
// when a path component is not a folder or cannot be made.
absl::Status MakePrivateDirs(const std::string& dir);

// Why `dir` must not be trusted (missing, not a folder, owned by another
// user, writable by group or others), or empty when it may be. The reason
// names the path and the fix ("...: chmod 700 /x").
std::string UnsafeFolderReason(const std::string& dir);

// The same for an open file (`fd`, opened from `path`): not a regular file,
// another user's, or writable by group or others. Empty when it may be read.
std::string UnsafeFileReason(int fd, const std::string& path);
// The same by name, without following a symlink (a symlink is refused).
std::string UnsafeFileReason(const std::string& path);

// Opens `path` for reading without following a symlink in its last
// component. -1 with errno set (ELOOP for a symlink) when it cannot.
int OpenNoFollow(const std::string& path);

// Writes `bytes` to `path` through ".<name>.tmp.<pid>.<n>" in the same folder,
// fsync and rename: a reader sees the old file or the new one whole, and of
// several concurrent writers (threads or processes) the last rename wins.
// Mode 0600. The temp file is removed on failure.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view bytes);

// What ReadWholeFile reads at most. Every file it serves (cache entries and
// records, usage counts, memos, tuning stores) is far smaller; a larger one
// is damaged or planted, and reading it would exhaust memory.
inline constexpr int64_t kMaxReadFileBytes = int64_t{256} << 20;

// The whole file; NotFound when absent, Unavailable when unreadable or
// larger than kMaxReadFileBytes.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);
// The whole of an open file, from its current offset. False on a read error
// or a file larger than kMaxReadFileBytes.
bool ReadWholeFile(int fd, std::string& out);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_FILES_H_
