#include "jit/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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
  if (std::string dir = Env("TESSEL_CACHE_DIR"); !dir.empty()) return dir;
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
    Disable("no cache folder given");
    return;
  }
  if (absl::Status made = MakePrivateDirs(directory_.version_dir());
      !made.ok()) {
    Disable(std::string(made.message()));
    return;
  }
  for (const std::string& dir : {directory_.root(), directory_.version_dir()}) {
    if (std::string why = UnsafeFolderReason(dir); !why.empty()) {
      Disable(why);
      return;
    }
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

std::optional<Cubin> DiskCache::Load(const std::string& key) {
  if (!enabled_) return std::nullopt;
  const std::string path = directory_.EntryPath(key, ".cubin");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) {
      WarnOnce(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    return std::nullopt;
  }
  std::string bytes;
  const bool read = ReadWholeFile(fd, bytes);
  std::optional<Cubin> cubin;
  if (read) cubin = DecodeCacheEntry(bytes);
  if (cubin.has_value()) ::futimens(fd, nullptr);  // LRU: touch on hit
  ::close(fd);
  if (!cubin.has_value()) {
    internal::Count(internal::Counter::kCorruptEntries);
    std::error_code ec;
    fs::remove(path, ec);  // a miss; the caller rebuilds it
  }
  return cubin;
}

bool DiskCache::WriteAtomically(const std::string& path,
                                absl::string_view bytes) {
  absl::Status written = WriteFileAtomically(path, bytes);
  if (!written.ok()) WarnOnce(std::string(written.message()));
  return written.ok();
}

void DiskCache::Store(const std::string& key, const Cubin& cubin,
                      const CudaSource& source,
                      const std::vector<std::string>& options) {
  if (!enabled_) return;
  const fs::path shard = fs::path(directory_.EntryPath(key, "")).parent_path();
  if (absl::Status made = MakePrivateDirs(shard.string()); !made.ok()) {
    WarnOnce(std::string(made.message()));
    return;
  }
  nlohmann::json meta;
  meta["key"] = key;
  meta["schema"] = kCacheSchemaVersion;
  meta["entry"] = source.entry;
  meta["lowered_entry"] = cubin.lowered_entry;
  meta["arch"] = cubin.arch;
  meta["options"] = options;
  meta["nvrtc_version"] = NvrtcVersion();
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
  if (!WriteAtomically(directory_.EntryPath(key, ".cu"), source.text) ||
      !WriteAtomically(directory_.EntryPath(key, ".json"), meta.dump(2)) ||
      !WriteAtomically(directory_.EntryPath(key, ".cubin"),
                       EncodeCacheEntry(cubin))) {
    return;
  }
  absl::StatusOr<uint64_t> freed = directory_.Prune(options_.max_bytes);
  if (!freed.ok()) WarnOnce(std::string(freed.status().message()));
}

std::unique_ptr<DiskCache::KeyLock> DiskCache::LockKey(const std::string& key) {
  if (!enabled_) return nullptr;
  const std::string path = directory_.EntryPath(key, ".lock");
  if (absl::Status made =
          MakePrivateDirs(fs::path(path).parent_path().string());
      !made.ok()) {
    WarnOnce(std::string(made.message()));
    return nullptr;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    WarnOnce(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
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
