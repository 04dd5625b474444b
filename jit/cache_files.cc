#include "jit/cache_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;

std::atomic<uint64_t> g_temp_counter{0};

}  // namespace

absl::Status MakePrivateDirs(const std::string& dir) {
  std::error_code ec;
  const fs::path path(dir);
  if (fs::is_directory(path, ec)) return absl::OkStatus();
  if (path.has_parent_path() && path.parent_path() != path) {
    if (absl::Status s = MakePrivateDirs(path.parent_path().string());
        !s.ok()) {
      return s;
    }
  }
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  if (!fs::is_directory(path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " is not a folder"));
  }
  return absl::OkStatus();
}

namespace {

// The owner and mode rules shared by folders and files.
std::string UnsafeOwnerOrMode(const struct stat& st, const std::string& path,
                              bool folder) {
  if (st.st_uid != ::geteuid()) {
    return absl::StrCat(path, " is owned by uid ", st.st_uid,
                        ", not by you (uid ", ::geteuid(),
                        "): anyone could have written it; remove it or point "
                        "TESSEL_CACHE_DIR at a folder of your own");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    const std::string fix =
        folder ? absl::StrCat("chmod 700 ", path,
                              " (after checking what is in it)")
               : absl::StrCat("rm ", path,
                              " (the cache writes it again, "
                              "mode 0600)");
    return absl::StrFormat("%s is writable by group or others (mode %04o): %s",
                           path, st.st_mode & 07777, fix);
  }
  return "";
}

}  // namespace

std::string UnsafeFolderReason(const std::string& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    return absl::StrCat("cannot stat ", dir, ": ", std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::StrCat(dir, " is not a folder",
                        S_ISLNK(st.st_mode) ? " (a symlink)" : "");
  }
  return UnsafeOwnerOrMode(st, dir, /*folder=*/true);
}

std::string UnsafeFileReason(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::StrCat("cannot stat ", path, ": ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return absl::StrCat(path, " is not a plain file");
  return UnsafeOwnerOrMode(st, path, /*folder=*/false);
}

std::string UnsafeFileReason(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::StrCat("cannot stat ", path, ": ", std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    return absl::StrCat(path, " is a symlink: remove it");
  }
  if (!S_ISREG(st.st_mode)) return absl::StrCat(path, " is not a plain file");
  return UnsafeOwnerOrMode(st, path, /*folder=*/false);
}

int OpenNoFollow(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view bytes) {
  const fs::path target(path);
  const std::string temp =
      (target.parent_path() / absl::StrCat(".", target.filename().string(),
                                           ".tmp.", ::getpid(), ".",
                                           g_temp_counter.fetch_add(1)))
          .string();
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", temp, ": ", std::strerror(errno)));
  }
  bool ok = true;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  const int saved_errno = errno;
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), path.c_str()) == 0) {
    return absl::OkStatus();
  }
  const int error = ok ? errno : saved_errno;
  ::unlink(temp.c_str());
  return absl::UnavailableError(
      absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
}

bool ReadWholeFile(int fd, std::string& out) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size > kMaxReadFileBytes) return false;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return true;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why =
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(why)
                           : absl::UnavailableError(why);
  }
  std::string out;
  const bool ok = ReadWholeFile(fd, out);
  ::close(fd);
  if (!ok) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, " (a read error, or larger than ",
                     kMaxReadFileBytes >> 20, " MiB)"));
  }
  return out;
}

}  // namespace tessel::jit
