#include "jit/cache_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "jit/cache_entry.h"
#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/cache_usage.h"
#include "jit/ptxas_version.h"
#include "nlohmann/json.hpp"

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;

// Beside the shard folders: when the size limit last removed an entry.
constexpr char kSizeEvictionFile[] = "last-size-limit-eviction";

absl::Time ToAbslTime(fs::file_time_type time) {
  const auto system = std::chrono::file_clock::to_sys(time);
  return absl::FromChrono(system);
}

bool IsTempFile(const std::string& name) {
  return !name.empty() && name[0] == '.' && absl::StrContains(name, ".tmp.");
}

// "<key>.<ext>" -> key; empty for files that are not entry files.
std::string KeyOf(const std::string& name) {
  if (name.empty() || name[0] == '.') return "";
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return "";
  return name.substr(0, dot);
}

// The file's bytes (at most `limit`), read only when it may be trusted;
// otherwise `why` says what is wrong.
bool ReadTrusted(const std::string& path, std::string& out, std::string& why,
                 size_t limit = SIZE_MAX) {
  const int fd = OpenNoFollow(path);
  if (fd < 0) {
    why = errno == ELOOP
              ? absl::StrCat(path, " is a symlink: remove it")
              : absl::StrCat("cannot read ", path, ": ", std::strerror(errno));
    return false;
  }
  why = UnsafeFileReason(fd, path);
  bool ok = why.empty();
  if (ok && limit != SIZE_MAX) {
    out.resize(limit);
    const ssize_t n = ::pread(fd, out.data(), limit, 0);
    ok = n >= 0;
    out.resize(ok ? static_cast<size_t>(n) : 0);
  } else if (ok) {
    ok = ReadWholeFile(fd, out);
  }
  if (!ok && why.empty()) {
    why = absl::StrCat("cannot read ", path, " (a read error, or larger than ",
                       kMaxReadFileBytes >> 20, " MiB)");
  }
  ::close(fd);
  return ok;
}

// Whether a writer holds the key's lock (DiskCache::LockKey) now.
bool KeyLocked(const std::string& lock_path) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (!held) ::flock(fd, LOCK_UN);
  ::close(fd);
  return held;
}

// A temp file (".<name>.tmp.<pid>.<n>", WriteFileAtomically) whose write
// will not finish: its process is gone, or it is over 10 minutes old. A
// minute's grace first: in a folder shared between hosts the pid may be
// another machine's, and a live write there is young.
bool StaleTemp(const fs::path& temp) {
  std::error_code ec;
  const fs::file_time_type written = fs::last_write_time(temp, ec);
  if (ec) return false;
  const auto age = fs::file_time_type::clock::now() - written;
  if (age < std::chrono::minutes(1)) return false;
  if (age > std::chrono::minutes(10)) return true;
  const std::string name = temp.filename().string();
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos) return false;
  absl::string_view pid_text = absl::string_view(name).substr(at + 5);
  pid_text = pid_text.substr(0, pid_text.find('.'));
  int pid = 0;
  if (!absl::SimpleAtoi(pid_text, &pid) || pid <= 0) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

struct Group {
  CacheEntryInfo info;
  std::vector<fs::path> files;
  bool has_source_or_json = false;
};

// Every key's files under `version_dir` (one level of shard folders), plus
// temp files in `temps`. Files in an untrusted shard, and untrusted files,
// get their key's `problem` set.
absl::StatusOr<std::map<std::string, Group>> Scan(
    const std::string& version_dir, std::vector<fs::path>* temps) {
  std::map<std::string, Group> groups;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(version_dir, ec))) return groups;
  fs::directory_iterator shards(version_dir, ec), end;
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", version_dir, ": ", ec.message()));
  }
  for (; shards != end; shards.increment(ec)) {
    if (ec) break;
    std::error_code shard_ec;
    if (!shards->is_directory(shard_ec) || shards->is_symlink(shard_ec)) {
      continue;  // the size-eviction record, or a stray
    }
    const std::string shard = shards->path().string();
    const std::string shard_problem = UnsafeFolderReason(shard);
    fs::directory_iterator files(shard, shard_ec);
    for (; !shard_ec && files != end; files.increment(shard_ec)) {
      std::error_code file_ec;
      const fs::file_status status = files->symlink_status(file_ec);
      if (file_ec || fs::is_directory(status)) continue;
      const std::string name = files->path().filename().string();
      if (IsTempFile(name)) {
        if (temps != nullptr) temps->push_back(files->path());
        continue;
      }
      const std::string key = KeyOf(name);
      if (key.empty()) continue;
      // A file removed since the listing (a prune, a writer's lock) is gone,
      // not a problem; its size and time must not be read as -1 and 1881.
      const uintmax_t bytes =
          fs::is_regular_file(status) ? files->file_size(file_ec) : 0;
      if (file_ec) continue;
      const fs::file_time_type written =
          fs::last_write_time(files->path(), file_ec);
      if (file_ec) continue;
      const absl::Time mtime = ToAbslTime(written);
      Group& group = groups[key];
      group.info.key = key;
      group.files.push_back(files->path());
      const std::string path = files->path().string();
      if (group.info.problem.empty()) {
        group.info.problem =
            shard_problem.empty() ? UnsafeFileReason(path) : shard_problem;
      }
      group.info.bytes += bytes;
      if (absl::EndsWith(name, ".cubin")) {
        group.info.cubin_path = path;
        group.info.last_used = mtime;
      } else if (group.info.cubin_path.empty()) {
        group.info.last_used = std::max(group.info.last_used, mtime);
      }
      if (absl::EndsWith(name, ".cu") || absl::EndsWith(name, ".json")) {
        group.has_source_or_json = true;
      }
    }
  }
  return groups;
}

absl::Status RemoveFiles(const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    std::error_code ec;
    fs::remove(file, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot remove ", file.string(), ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

// Why the sidecar `json` does not describe the entry `stamp`, or empty.
std::string SidecarProblem(const std::string& json_text,
                           const EntryStamp& stamp) {
  const nlohmann::json meta =
      nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object()) return "its .json is not a JSON object";
  for (const auto& [field, want] :
       {std::pair<const char*, const std::string*>{"key", &stamp.key},
        {"arch", &stamp.arch},
        {"entry", &stamp.entry}}) {
    auto it = meta.find(field);
    if (it == meta.end() || !it->is_string() || *it != *want) {
      return absl::StrCat("its .json gives another ", field,
                          " than the entry (", *want, ")");
    }
  }
  return "";
}

}  // namespace

std::string EmptyCacheRootReason() {
  const char* env = std::getenv("TESSEL_CACHE_DIR");
  if (env != nullptr && *env == '\0') {
    return "TESSEL_CACHE_DIR is set but empty: unset it for the default "
           "folder ($XDG_CACHE_HOME/tessel or ~/.cache/tessel), give it a "
           "folder, or set TESSEL_CACHE=off";
  }
  return "no cache folder given";
}

CacheDirectory::CacheDirectory(std::string root)
    : root_(std::move(root)),
      version_dir_(root_.empty() ? ""
                                 : (fs::path(root_) /
                                    absl::StrCat("v", kCacheSchemaVersion))
                                       .string()) {}

std::string CacheDirectory::EntryPath(const std::string& key,
                                      const std::string& extension) const {
  return (fs::path(version_dir_) / key.substr(0, 2) / (key + extension))
      .string();
}

absl::Status CacheDirectory::CheckTrusted() const {
  if (root_.empty()) {
    return absl::FailedPreconditionError(EmptyCacheRootReason());
  }
  for (const std::string& dir : {root_, version_dir_}) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(dir, ec))) break;
    if (std::string why = UnsafeFolderReason(dir); !why.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the cache folder ", root_, " cannot be used: ", why));
    }
  }
  return absl::OkStatus();
}

bool CacheDirectory::HasSoundEntry(const std::string& key) const {
  if (key.size() < 2 || !CheckTrusted().ok()) return false;
  const std::string path = EntryPath(key, ".cubin");
  if (!UnsafeFolderReason(fs::path(path).parent_path().string()).empty()) {
    return false;
  }
  std::string bytes, why;
  if (!ReadTrusted(path, bytes, why)) return false;
  absl::StatusOr<DecodedEntry> entry = ParseCacheEntry(bytes);
  return entry.ok() && entry->stamp.key == key;
}

absl::StatusOr<std::vector<CacheEntryInfo>> CacheDirectory::List() const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, nullptr);
  if (!groups.ok()) return groups.status();
  std::vector<CacheEntryInfo> entries;
  for (auto& [key, group] : *groups) {
    CacheEntryInfo& info = group.info;
    if (!info.cubin_path.empty() && info.problem.empty()) {
      std::string prefix, why;
      if (!ReadTrusted(info.cubin_path, prefix, why, 4096)) {
        info.problem = why;
      } else if (absl::StatusOr<DecodedEntry> peek = PeekCacheEntry(prefix);
                 !peek.ok()) {
        info.problem = std::string(peek.status().message());
      } else if (peek->stamp.key != key) {
        info.problem = absl::StrCat("holds the entry of key ", peek->stamp.key);
      } else {
        info.entry = peek->stamp.entry;
        info.arch = peek->stamp.arch;
      }
    }
    entries.push_back(std::move(info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
              return a.last_used < b.last_used;
            });
  return entries;
}

absl::StatusOr<CacheVerifyReport> CacheDirectory::Verify(bool remove) const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  std::vector<fs::path> temps;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, &temps);
  if (!groups.ok()) return groups.status();
  CacheVerifyReport report;
  for (const fs::path& temp : temps) {
    if (!StaleTemp(temp)) continue;
    ++report.stale_temps;
    std::error_code ec;
    if (remove) fs::remove(temp, ec);
  }
  auto drop = [&](const std::vector<fs::path>& files) -> absl::Status {
    return remove ? RemoveFiles(files) : absl::OkStatus();
  };
  for (const auto& [key, group] : *groups) {
    if (group.info.cubin_path.empty()) {
      // A .cu or .json without its .cubin: a writer that is still at it
      // holds the key's lock; otherwise it was cut short (a full disk).
      if (!group.has_source_or_json || KeyLocked(EntryPath(key, ".lock"))) {
        continue;
      }
      // A writer that finished after the scan has renamed its .cubin into
      // place and dropped its lock: a whole entry, not an orphan.
      std::error_code cubin_ec;
      if (fs::exists(fs::symlink_status(EntryPath(key, ".cubin"), cubin_ec))) {
        continue;
      }
      report.orphans.push_back(key);
      report.problems.push_back(
          absl::StrCat(key, ": a .cu or .json without its .cubin (orphan)"));
      std::vector<fs::path> files;
      for (const fs::path& f : group.files) {
        if (f.extension() != ".lock") files.push_back(f);
      }
      if (absl::Status s = drop(files); !s.ok()) return s;
      continue;
    }
    std::string why = group.info.problem;
    std::string bytes;
    absl::StatusOr<DecodedEntry> entry =
        absl::DataLossError("not read");  // replaced below when trusted
    if (why.empty() && ReadTrusted(group.info.cubin_path, bytes, why)) {
      entry = ParseCacheEntry(bytes);
      if (!entry.ok()) {
        why = std::string(entry.status().message());
      } else if (entry->stamp.key != key) {
        why = absl::StrCat("holds the entry of key ", entry->stamp.key,
                           " (a file copied over another)");
      }
    }
    if (!why.empty()) {
      report.removed.push_back(key);
      report.problems.push_back(absl::StrCat(key, ": ", why));
      if (absl::Status s = drop(group.files); !s.ok()) return s;
      continue;
    }
    ++report.good;
    const std::string json = EntryPath(key, ".json");
    std::string text, json_why;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(json, ec))) continue;
    if (ReadTrusted(json, text, json_why)) {
      json_why = SidecarProblem(text, entry->stamp);
    }
    if (!json_why.empty()) {
      report.sidecars.push_back(key);
      report.problems.push_back(absl::StrCat(
          key, ": ", json_why, "; the entry is sound, its .json removed"));
      if (absl::Status s = drop({json}); !s.ok()) return s;
    }
  }
  return report;
}

absl::Status CacheDirectory::Remove(const std::string& key) const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  std::vector<fs::path> files;
  for (const char* extension : {".cubin", ".json", ".cu", ".lock"}) {
    files.push_back(EntryPath(key, extension));
  }
  return RemoveFiles(files);
}

absl::StatusOr<uint64_t> CacheDirectory::TotalBytes() const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  std::vector<fs::path> temps;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, &temps);
  if (!groups.ok()) return groups.status();
  uint64_t total = 0;
  for (const auto& [key, group] : *groups) total += group.info.bytes;
  for (const fs::path& temp : temps) {
    std::error_code ec;
    const uint64_t size = fs::file_size(temp, ec);
    if (!ec) total += size;
  }
  return total;
}

absl::Status CacheDirectory::Clear() const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  std::vector<fs::path> temps;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, &temps);
  if (!groups.ok()) return groups.status();
  for (const auto& [key, group] : *groups) {
    if (absl::Status s = RemoveFiles(group.files); !s.ok()) return s;
  }
  // The hit / miss record starts again with the entries.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(CacheUsagePath(version_dir_), ec)))
    temps.push_back(CacheUsagePath(version_dir_));
  // And ptxas's version is asked again.
  for (const fs::directory_entry& file :
       fs::directory_iterator(PtxasMemoFolder(root_), ec)) {
    if (file.is_regular_file(ec)) temps.push_back(file.path());
  }
  // And the program index's records (DiskCache::RecordPath) go too.
  for (const fs::directory_entry& shard :
       fs::directory_iterator(fs::path(root_) / "programs", ec)) {
    std::error_code shard_ec;
    if (!shard.is_directory(shard_ec) || shard.is_symlink(shard_ec)) continue;
    for (const fs::directory_entry& file :
         fs::directory_iterator(shard.path(), shard_ec)) {
      if (file.is_regular_file(shard_ec)) temps.push_back(file.path());
    }
  }
  return RemoveFiles(temps);
}

absl::StatusOr<uint64_t> CacheDirectory::Prune(uint64_t max_bytes) const {
  return PruneTo(max_bytes, /*for_size_limit=*/false);
}

absl::StatusOr<uint64_t> CacheDirectory::EvictForSizeLimit(
    uint64_t max_bytes) const {
  return PruneTo(max_bytes, /*for_size_limit=*/true);
}

absl::StatusOr<uint64_t> CacheDirectory::PruneTo(uint64_t max_bytes,
                                                 bool for_size_limit) const {
  if (absl::Status s = CheckTrusted(); !s.ok()) return s;
  std::vector<fs::path> temps;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, &temps);
  if (!groups.ok()) return groups.status();
  uint64_t freed = 0;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const fs::path& temp : temps) {
    std::error_code ec;
    const uint64_t size = fs::file_size(temp, ec);
    if (!ec && fs::last_write_time(temp, ec) < stale && !ec &&
        fs::remove(temp, ec)) {
      freed += size;
    }
  }
  std::vector<const Group*> by_age;
  uint64_t total = 0;
  for (const auto& [key, group] : *groups) {
    by_age.push_back(&group);
    total += group.info.bytes;
  }
  std::sort(by_age.begin(), by_age.end(), [](const Group* a, const Group* b) {
    return a->info.last_used < b->info.last_used;
  });
  bool evicted_entry = false;
  for (const Group* group : by_age) {
    if (total <= max_bytes) break;
    if (absl::Status s = RemoveFiles(group->files); !s.ok()) return s;
    total -= group->info.bytes;
    freed += group->info.bytes;
    evicted_entry = evicted_entry || !group->info.cubin_path.empty();
  }
  if (for_size_limit && evicted_entry) {
    // Best effort: a record that cannot be written only makes a later
    // "entries are gone" message less precise.
    (void)WriteFileAtomically(
        (fs::path(version_dir_) / kSizeEvictionFile).string(),
        absl::StrCat(absl::ToUnixNanos(absl::Now())));
  }
  return freed;
}

absl::Time CacheDirectory::LastSizeLimitEviction() const {
  if (!CheckTrusted().ok()) return absl::InfinitePast();
  std::string text, why;
  int64_t nanos = 0;
  if (!ReadTrusted((fs::path(version_dir_) / kSizeEvictionFile).string(), text,
                   why, 64) ||
      !absl::SimpleAtoi(text, &nanos)) {
    return absl::InfinitePast();
  }
  return absl::FromUnixNanos(nanos);
}

}  // namespace tessel::jit
