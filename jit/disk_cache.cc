#include "jit/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "jit/byte_size.h"
#include "jit/cache_entry.h"
#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/counters.h"
#include "jit/ptx_compile.h"
#include "jit/ptxas_version.h"
#include "nlohmann/json.hpp"

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

std::string DefaultCacheRoot() {
  // Set but empty is a mistake (an unset shell variable), not "the default".
  if (std::getenv("TESSEL_CACHE_DIR") != nullptr)
    return Env("TESSEL_CACHE_DIR");
  if (std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) {
    return (fs::path(xdg) / "tessel").string();
  }
  std::string home = Env("HOME");
  if (home.empty()) home = "/tmp";
  return (fs::path(home) / ".cache" / "tessel").string();
}

DiskCacheOptions DiskCacheOptions::FromEnv() {
  DiskCacheOptions options;
  const std::string mode = absl::AsciiStrToLower(Env("TESSEL_CACHE"));
  options.enabled =
      !(mode == "off" || mode == "0" || mode == "false" || mode == "no");
  // A typo (TESSEL_CACHE=of) must not pass for "on" unnoticed; once a
  // process is enough.
  static std::atomic<bool> warned{false};
  if (options.enabled && !mode.empty() && mode != "on" && mode != "1" &&
      mode != "true" && mode != "yes" && !warned.exchange(true)) {
    std::fprintf(stderr,
                 "tessel: warning: TESSEL_CACHE=%s is neither on nor off "
                 "(off, 0, false or no switch the disk cache off); it stays "
                 "on\n",
                 Env("TESSEL_CACHE").c_str());
  }
  options.dir = DefaultCacheRoot();
  options.max_bytes =
      ByteSizeFromEnv("TESSEL_CACHE_MAX_BYTES", options.max_bytes);
  return options;
}

DiskCache::DiskCache(DiskCacheOptions options)
    : options_(std::move(options)), directory_(options_.dir) {
  if (!options_.enabled) {
    disabled_reason_ = "switched off (TESSEL_CACHE=off)";
    return;
  }
  if (options_.dir.empty()) {
    Disable(EmptyCacheRootReason());
    return;
  }
  // An existing root is checked before anything is made in it.
  if (absl::Status trusted = directory_.CheckTrusted(); !trusted.ok()) {
    Disable(std::string(trusted.message()));
    return;
  }
  if (absl::Status made = MakePrivateDirs(directory_.version_dir());
      !made.ok()) {
    Disable(std::string(made.message()));
    return;
  }
  if (absl::Status trusted = directory_.CheckTrusted(); !trusted.ok()) {
    Disable(std::string(trusted.message()));
    return;
  }
  enabled_ = true;
}

void DiskCache::Disable(std::string reason) {
  enabled_ = false;
  disabled_reason_ = std::move(reason);
  WarnOnce(disabled_reason_);
}

void DiskCache::WarnOnce(const std::string& what) {
  if (warned_.exchange(true)) return;
  std::fprintf(stderr,
               "tessel: warning: kernel disk cache: %s; going on uncached\n",
               what.c_str());
}

void DiskCache::WarnUntrusted(const std::string& why) {
  {
    absl::MutexLock lock(&untrusted_mu_);
    if (untrusted_warned_.size() >= 8 ||
        !untrusted_warned_.insert(why).second) {
      return;
    }
  }
  std::fprintf(stderr,
               "tessel: warning: kernel disk cache: not trusting %s; "
               "compiling instead\n",
               why.c_str());
}

std::string DiskCache::UntrustedFolders(const std::string& key) const {
  if (absl::Status s = directory_.CheckTrusted(); !s.ok()) {
    return std::string(s.message());
  }
  const std::string shard =
      fs::path(directory_.EntryPath(key, "")).parent_path().string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(shard, ec))) return "";
  return UnsafeFolderReason(shard);
}

std::optional<Cubin> DiskCache::Load(const EntryStamp& expected) {
  if (!enabled_ || expected.key.size() < 2) return std::nullopt;
  if (std::string why = UntrustedFolders(expected.key); !why.empty()) {
    internal::Count(internal::Counter::kUntrustedFiles);
    WarnUntrusted(why);
    return std::nullopt;
  }
  const std::string path = directory_.EntryPath(expected.key, ".cubin");
  const int fd = OpenNoFollow(path);
  if (fd < 0) {
    if (errno == ELOOP) {
      internal::Count(internal::Counter::kUntrustedFiles);
      WarnUntrusted(absl::StrCat(path, ": it is a symlink; remove it"));
    } else if (errno != ENOENT) {
      WarnOnce(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    return std::nullopt;
  }
  if (std::string why = UnsafeFileReason(fd, path); !why.empty()) {
    ::close(fd);
    internal::Count(internal::Counter::kUntrustedFiles);
    WarnUntrusted(why);
    return std::nullopt;  // the rebuilt entry is renamed over it
  }
  std::string bytes;
  std::optional<Cubin> cubin;
  if (ReadWholeFile(fd, bytes)) {
    if (absl::StatusOr<Cubin> decoded = DecodeCacheEntry(bytes, expected);
        decoded.ok()) {
      cubin = *std::move(decoded);
    }
  }
  struct stat read_stat {};
  const bool have_stat = ::fstat(fd, &read_stat) == 0;
  if (cubin.has_value()) ::futimens(fd, nullptr);  // LRU: touch on hit
  ::close(fd);
  if (!cubin.has_value()) {
    internal::Count(internal::Counter::kCorruptEntries);
    // A miss; the caller rebuilds it. Only the file that was read goes: a
    // writer may have renamed a sound entry into place meanwhile.
    struct stat now {};
    if (have_stat && ::lstat(path.c_str(), &now) == 0 &&
        now.st_ino == read_stat.st_ino && now.st_dev == read_stat.st_dev) {
      for (const char* extension : {".cubin", ".json", ".cu"}) {
        ::unlink(directory_.EntryPath(expected.key, extension).c_str());
      }
    }
  }
  return cubin;
}

absl::Status DiskCache::WriteAtomically(const std::string& path,
                                        absl::string_view bytes) {
  absl::Status written = WriteFileAtomically(path, bytes);
  if (!written.ok()) WarnOnce(std::string(written.message()));
  return written;
}

absl::Status DiskCache::Store(const std::string& key, const Cubin& cubin,
                              const CudaSource& source,
                              const std::vector<std::string>& options) {
  if (!enabled_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the disk cache is off: ", disabled_reason_));
  }
  if (key.size() < 2) return absl::InvalidArgumentError("no cache key");
  const fs::path shard = fs::path(directory_.EntryPath(key, "")).parent_path();
  if (absl::Status made = MakePrivateDirs(shard.string()); !made.ok()) {
    WarnOnce(std::string(made.message()));
    return made;
  }
  if (std::string why = UntrustedFolders(key); !why.empty()) {
    WarnUntrusted(why);  // nothing is written where others could change it
    return absl::FailedPreconditionError(why);
  }
  // For people (and a check in `verify`); no reader relies on it.
  nlohmann::json meta;
  meta["key"] = key;
  meta["schema"] = kCacheSchemaVersion;
  meta["entry"] = source.entry;
  meta["lowered_entry"] = cubin.lowered_entry;
  meta["arch"] = cubin.arch;
  meta["options"] = options;
  meta["nvrtc_version"] = NvrtcVersion();
  if (source.language == SourceLanguage::kPtx) {
    // The <key>.cu beside it then holds PTX; nothing parses it.
    meta["language"] = SourceLanguageName(source.language);
    meta["ptxas_version"] = PtxasVersion();
  }
  meta["tessel_version"] = TesselVersion();
  meta["compile_ms"] = cubin.compile_ms;
  meta["created_unix"] = absl::ToUnixSeconds(absl::Now());
  meta["cubin_bytes"] = cubin.image.size();
  std::vector<std::string> header_names;
  for (const CudaHeader& header : source.headers) {
    header_names.push_back(header.name);
  }
  meta["headers"] = header_names;
  // The .cubin goes last: its rename is what makes the entry visible.
  for (auto [path, bytes] :
       {std::pair{directory_.EntryPath(key, ".cu"), source.text},
        std::pair{directory_.EntryPath(key, ".json"), meta.dump(2)},
        std::pair{directory_.EntryPath(key, ".cubin"),
                  EncodeCacheEntry(
                      MakeEntryStamp(key, cubin.arch, source.entry), cubin)}}) {
    if (absl::Status s = WriteAtomically(path, bytes); !s.ok()) return s;
  }
  absl::StatusOr<uint64_t> freed =
      directory_.EvictForSizeLimit(options_.max_bytes);
  if (!freed.ok()) WarnOnce(std::string(freed.status().message()));
  return absl::OkStatus();
}

std::string DiskCache::RecordPath(const std::string& key) const {
  return (fs::path(options_.dir) / "programs" / key.substr(0, 2) / key)
      .string();
}

std::optional<std::string> DiskCache::LoadRecord(const std::string& key) {
  if (!enabled_ || key.size() < 2) return std::nullopt;
  const std::string path = RecordPath(key);
  const std::string shard = fs::path(path).parent_path().string();
  if (!directory_.CheckTrusted().ok() ||
      !UnsafeFolderReason(fs::path(shard).parent_path().string()).empty() ||
      !UnsafeFolderReason(shard).empty()) {
    return std::nullopt;  // missing (the usual miss) or not ours to read
  }
  const int fd = OpenNoFollow(path);
  if (fd < 0) return std::nullopt;
  std::string bytes;
  const bool read =
      UnsafeFileReason(fd, path).empty() && ReadWholeFile(fd, bytes);
  ::close(fd);
  if (!read) return std::nullopt;
  return bytes;
}

void DiskCache::StoreRecord(const std::string& key, absl::string_view bytes) {
  if (!enabled_ || key.size() < 2) return;
  const std::string path = RecordPath(key);
  const fs::path shard = fs::path(path).parent_path();
  if (!MakePrivateDirs(shard.string()).ok()) return;
  if (!directory_.CheckTrusted().ok() ||
      !UnsafeFolderReason(shard.parent_path().string()).empty() ||
      !UnsafeFolderReason(shard.string()).empty()) {
    return;  // nothing written where others could change it
  }
  (void)WriteFileAtomically(path, bytes);
}

std::unique_ptr<DiskCache::KeyLock> DiskCache::LockKey(const std::string& key) {
  if (!enabled_ || key.size() < 2) return nullptr;
  const std::string path = directory_.EntryPath(key, ".lock");
  if (absl::Status made =
          MakePrivateDirs(fs::path(path).parent_path().string());
      !made.ok()) {
    WarnOnce(std::string(made.message()));
    return nullptr;
  }
  if (std::string why = UntrustedFolders(key); !why.empty()) {
    WarnUntrusted(why);
    return nullptr;
  }
  const int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    WarnOnce(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    return nullptr;
  }
  if (std::string why = UnsafeFileReason(fd, path); !why.empty()) {
    ::close(fd);  // someone else's lock could hold every compile back
    WarnUntrusted(why);
    return nullptr;
  }
  const absl::Time deadline = absl::Now() + options_.lock_timeout;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || absl::Now() >= deadline) {
      ::close(fd);
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::make_unique<KeyLock>(fd, path);
}

DiskCache::KeyLock::~KeyLock() {
  // Unlinked while still held: whoever waits on this inode re-checks the
  // cache after taking it, and a newcomer finds the stored entry first.
  ::unlink(path_.c_str());
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace tessel::jit
