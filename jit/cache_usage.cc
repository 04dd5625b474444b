#include "jit/cache_usage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "jit/cache_files.h"

namespace tessel::jit {
namespace {

CacheUsage Parse(const std::string& text) {
  CacheUsage u;
  std::vector<std::string> parts =
      absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &u.hits) ||
      !absl::SimpleAtoi(parts[1], &u.misses)) {
    return CacheUsage{};
  }
  return u;
}

}  // namespace

std::string CacheUsagePath(const std::string& version_dir) {
  return version_dir + "/usage";
}

void RecordCacheUsage(const std::string& version_dir, bool hit) {
  const std::string path = CacheUsagePath(version_dir);
  int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  // Another user's or a shared-writable record is not ours to count in.
  if (!UnsafeFileReason(fd, path).empty() || ::flock(fd, LOCK_EX) != 0) {
    ::close(fd);
    return;
  }
  std::string text;
  CacheUsage u = ReadWholeFile(fd, text) ? Parse(text) : CacheUsage{};
  ++(hit ? u.hits : u.misses);
  // Fixed width, so each record overwrites the last in place: truncating
  // first made ext4 flush the file on close, a third of a hit's IO.
  const std::string out = absl::StrFormat("%20u %20u\n", u.hits, u.misses);
  (void)!::pwrite(fd, out.data(), out.size(), 0);
  if (text.size() > out.size()) (void)!::ftruncate(fd, out.size());  // junk
  ::close(fd);  // releases the lock
}

CacheUsage ReadCacheUsage(const std::string& version_dir) {
  const std::string path = CacheUsagePath(version_dir);
  int fd = OpenNoFollow(path);
  if (fd < 0) return {};
  std::string text;
  CacheUsage u;
  if (UnsafeFileReason(fd, path).empty() && ::flock(fd, LOCK_SH) == 0 &&
      ReadWholeFile(fd, text)) {
    u = Parse(text);
  }
  ::close(fd);
  return u;
}

}  // namespace tessel::jit
