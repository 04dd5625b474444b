#include "jit/cache_directory.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/cache_entry.h"
#include "jit/cache_key.h"
#include "nlohmann/json.hpp"

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;

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

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct Group {
  CacheEntryInfo info;
  std::vector<fs::path> files;
};

// Every key's files under `version_dir`, plus temp files in `temps`.
absl::StatusOr<std::map<std::string, Group>> Scan(
    const std::string& version_dir, std::vector<fs::path>* temps) {
  std::map<std::string, Group> groups;
  std::error_code ec;
  if (!fs::exists(version_dir, ec)) return groups;
  fs::recursive_directory_iterator it(version_dir, ec), end;
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", version_dir, ": ", ec.message()));
  }
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    const std::string name = it->path().filename().string();
    if (IsTempFile(name)) {
      if (temps != nullptr) temps->push_back(it->path());
      continue;
    }
    const std::string key = KeyOf(name);
    if (key.empty()) continue;
    Group& group = groups[key];
    group.info.key = key;
    group.files.push_back(it->path());
    group.info.bytes += it->file_size(file_ec);
    const absl::Time mtime = ToAbslTime(it->last_write_time(file_ec));
    if (absl::EndsWith(name, ".cubin")) {
      group.info.cubin_path = it->path().string();
      group.info.last_used = mtime;
    } else if (group.info.cubin_path.empty()) {
      group.info.last_used = std::max(group.info.last_used, mtime);
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

}  // namespace

CacheDirectory::CacheDirectory(std::string root)
    : root_(std::move(root)),
      version_dir_(
          (fs::path(root_) / absl::StrCat("v", kCacheSchemaVersion)).string()) {
}

std::string CacheDirectory::EntryPath(const std::string& key,
                                      const std::string& extension) const {
  return (fs::path(version_dir_) / key.substr(0, 2) / (key + extension))
      .string();
}

absl::StatusOr<std::vector<CacheEntryInfo>> CacheDirectory::List() const {
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, nullptr);
  if (!groups.ok()) return groups.status();
  std::vector<CacheEntryInfo> entries;
  for (auto& [key, group] : *groups) {
    const std::string json_text = ReadFile(EntryPath(key, ".json"));
    nlohmann::json meta = nlohmann::json::parse(json_text, nullptr, false);
    if (meta.is_object()) {
      group.info.entry = meta.value("entry", "");
      group.info.arch = meta.value("arch", "");
    }
    entries.push_back(std::move(group.info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
              return a.last_used < b.last_used;
            });
  return entries;
}

absl::StatusOr<CacheVerifyReport> CacheDirectory::Verify(
    bool remove_corrupt) const {
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, nullptr);
  if (!groups.ok()) return groups.status();
  CacheVerifyReport report;
  for (const auto& [key, group] : *groups) {
    if (group.info.cubin_path.empty()) continue;  // not an entry (yet)
    if (DecodeCacheEntry(ReadFile(group.info.cubin_path)).has_value()) {
      ++report.good;
      continue;
    }
    report.removed.push_back(key);
    if (remove_corrupt) {
      if (absl::Status s = RemoveFiles(group.files); !s.ok()) return s;
    }
  }
  return report;
}

absl::Status CacheDirectory::Remove(const std::string& key) const {
  std::vector<fs::path> files;
  for (const char* extension : {".cubin", ".json", ".cu", ".lock"}) {
    files.push_back(EntryPath(key, extension));
  }
  return RemoveFiles(files);
}

absl::StatusOr<uint64_t> CacheDirectory::TotalBytes() const {
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
  std::vector<fs::path> temps;
  absl::StatusOr<std::map<std::string, Group>> groups =
      Scan(version_dir_, &temps);
  if (!groups.ok()) return groups.status();
  for (const auto& [key, group] : *groups) {
    if (absl::Status s = RemoveFiles(group.files); !s.ok()) return s;
  }
  return RemoveFiles(temps);
}

absl::StatusOr<uint64_t> CacheDirectory::Prune(uint64_t max_bytes) const {
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
  for (const Group* group : by_age) {
    if (total <= max_bytes) break;
    if (absl::Status s = RemoveFiles(group->files); !s.ok()) return s;
    total -= group->info.bytes;
    freed += group->info.bytes;
  }
  return freed;
}

}  // namespace tessel::jit
