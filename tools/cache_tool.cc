// tessel-cache: stats | list | verify | prune --max-size S | clear |
// export FILE | import FILE, over one cache folder.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "jit/byte_size.h"
#include "jit/cache_directory.h"
#include "jit/cache_usage.h"
#include "jit/disk_cache.h"
#include "nlohmann/json.hpp"
#include "tessel/warmup.h"
#include "tools/cache_archive.h"
#include "tools/cli.h"

namespace tessel {
namespace {

constexpr char kUsage[] =
    R"(usage: tessel-cache [--cache-dir DIR] COMMAND [ARGS]
       tessel-cache --help | --version

Inspects and maintains the tessel disk cache (default folder:
$TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel).

  stats [--json]         entries, bytes, archs, disk hits and misses
                         (since the last clear), oldest and newest use
  list                   a header, then one line per entry: key, arch,
                         bytes, last use, entry
  verify                 check every entry (checksum, its key, trusted
                         files) and .json; remove unsound entries, orphan
                         .cu/.json files, disagreeing .json files and
                         temp files of writes that died
  prune --max-size S     remove least recently used entries down to S bytes
                         (S takes a K, M or G suffix: 512M)
  clear                  remove every entry
  export FILE            write every sound entry into one archive file
  import FILE            add an archive's entries (checked first)

Exit status: 0 done (verify: everything was sound); 1 verify removed
something; 2 a usage error, a failure, or a cache folder that cannot be
trusted (another user's, or writable by group or others: nothing is read or
changed there) or TESSEL_CACHE_DIR set but empty.
)";

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) {
    return absl::StrFormat("%.2f GiB", bytes / double(uint64_t{1} << 30));
  }
  if (bytes >= (uint64_t{1} << 20)) {
    return absl::StrFormat("%.2f MiB", bytes / double(uint64_t{1} << 20));
  }
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

std::string TimeText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", t, absl::LocalTimeZone());
}

// "512M", "1G", "4096", "100K" (powers of 1024).
absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  if (std::optional<uint64_t> bytes = jit::ParseByteSize(std::string(text)))
    return *bytes;
  return absl::InvalidArgumentError(absl::StrCat(
      "--max-size ", text, ": expected a size such as 512M, 2G or 1048576"));
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "tessel-cache: %s\n",
               std::string(status.message()).c_str());
  return 2;
}

// Folders of other entry formats beside the current one (v1 after an
// upgrade): never read, only taking room.
std::vector<std::string> OtherFormatFolders(const jit::CacheDirectory& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::filesystem::path current(dir.version_dir());
  for (std::filesystem::directory_iterator it(dir.root(), ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() >= 2 && name[0] == 'v' &&
        name.find_first_not_of("0123456789", 1) == std::string::npos &&
        it->path() != current && it->is_directory(ec)) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

// stats --json: the same facts for scripts, with the hit / miss record.
int StatsJson(const jit::CacheDirectory& dir,
              const std::vector<jit::CacheEntryInfo>& entries, uint64_t total,
              const std::map<std::string, int>& by_arch, int unsound,
              int leftovers) {
  const jit::CacheUsage usage = jit::ReadCacheUsage(dir.version_dir());
  nlohmann::json j;
  j["cache"] = dir.version_dir();
  j["entries"] = static_cast<int>(entries.size()) - leftovers - unsound;
  j["bytes"] = total;
  j["archs"] = nlohmann::json::object();
  for (const auto& [arch, count] : by_arch) j["archs"][arch] = count;
  j["unsound"] = unsound;
  j["leftovers"] = leftovers;
  j["hits"] = usage.hits;
  j["misses"] = usage.misses;
  const uint64_t lookups = usage.hits + usage.misses;
  j["hit_rate"] = lookups > 0 ? double(usage.hits) / double(lookups) : 0.0;
  if (!entries.empty()) {
    j["oldest_use"] = TimeText(entries.front().last_used);
    j["newest_use"] = TimeText(entries.back().last_used);
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

int Stats(const jit::CacheDirectory& dir, bool json) {
  absl::StatusOr<std::vector<jit::CacheEntryInfo>> entries = dir.List();
  if (!entries.ok()) return Fail(entries.status());
  absl::StatusOr<uint64_t> total = dir.TotalBytes();
  if (!total.ok()) return Fail(total.status());
  std::map<std::string, int> by_arch;
  int leftovers = 0, unsound = 0;
  for (const jit::CacheEntryInfo& e : *entries) {
    if (e.cubin_path.empty()) {
      ++leftovers;
      continue;
    }
    if (!e.problem.empty()) {
      ++unsound;
      continue;
    }
    ++by_arch[e.arch];
  }
  if (json)
    return StatsJson(dir, *entries, *total, by_arch, unsound, leftovers);
  std::printf("cache:    %s\n", dir.version_dir().c_str());
  std::printf("entries:  %d\n",
              static_cast<int>(entries->size()) - leftovers - unsound);
  std::printf("bytes:    %s (%llu)\n", HumanBytes(*total).c_str(),
              static_cast<unsigned long long>(*total));
  for (const auto& [arch, count] : by_arch) {
    std::printf("  %-10s %d\n", arch.c_str(), count);
  }
  if (unsound > 0) {
    std::printf("unsound:  %d (not loaded; verify removes them)\n", unsound);
  }
  if (leftovers > 0) {
    std::printf(
        "leftovers: %d keys without a .cubin (verify or prune removes them)\n",
        leftovers);
  }
  for (const std::string& old : OtherFormatFolders(dir)) {
    std::printf("older format: %s is not read; remove it to free its room\n",
                old.c_str());
  }
  const jit::CacheUsage usage = jit::ReadCacheUsage(dir.version_dir());
  std::printf(
      "lookups:  %llu hits, %llu misses (compiles found on disk, or "
      "not; since the last clear)\n",
      static_cast<unsigned long long>(usage.hits),
      static_cast<unsigned long long>(usage.misses));
  if (!entries->empty()) {
    std::printf("oldest use: %s\nnewest use: %s\n",
                TimeText(entries->front().last_used).c_str(),
                TimeText(entries->back().last_used).c_str());
  }
  return 0;
}

int List(const jit::CacheDirectory& dir) {
  absl::StatusOr<std::vector<jit::CacheEntryInfo>> entries = dir.List();
  if (!entries.ok()) return Fail(entries.status());
  std::printf("%-32s  %-8s %10s  %-19s  %s\n", "key", "arch", "bytes",
              "last use", "entry");
  for (const jit::CacheEntryInfo& e : *entries) {
    if (e.cubin_path.empty()) continue;
    std::printf("%s  %-8s %10llu  %s  %s\n", e.key.c_str(),
                e.arch.empty() ? "?" : e.arch.c_str(),
                static_cast<unsigned long long>(e.bytes),
                TimeText(e.last_used).c_str(),
                e.problem.empty() ? e.entry.c_str()
                                  : ("NOT LOADED: " + e.problem).c_str());
  }
  return 0;
}

int Verify(const jit::CacheDirectory& dir) {
  absl::StatusOr<jit::CacheVerifyReport> report = dir.Verify(true);
  if (!report.ok()) return Fail(report.status());
  std::printf(
      "verify: %d sound, %d corrupt (removed), %d orphan .cu/.json (removed), "
      "%d disagreeing .json (removed), %d stale temp files (removed)\n",
      report->good, static_cast<int>(report->removed.size()),
      static_cast<int>(report->orphans.size()),
      static_cast<int>(report->sidecars.size()), report->stale_temps);
  for (const std::string& line : report->problems) {
    std::printf("  %s\n", line.c_str());
  }
  return report->clean() ? 0 : 1;
}

}  // namespace

int CacheToolMain(int argc, char** argv) {
  std::string cache_dir;
  bool cache_dir_given = false;
  bool json = false;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("%s\n", tools::VersionLine("tessel-cache").c_str());
      return 0;
    }
    // --name VALUE and --name=VALUE alike.
    std::string name(arg), value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.substr(0, 2) == "--" && eq != arg.npos) {
      name = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
      has_value = true;
    }
    if (name == "--cache-dir" || name == "--max-size") {
      if (!has_value) {
        if (i + 1 >= argc) {
          return Fail(absl::InvalidArgumentError(
              absl::StrCat(name, ": missing its value")));
        }
        value = argv[++i];
      }
      if (name == "--cache-dir") {
        cache_dir = value;
        cache_dir_given = true;
      } else {
        args.push_back(name);
        args.push_back(value);
      }
      continue;
    }
    if (name == "--json") {
      if (has_value) {
        return Fail(absl::InvalidArgumentError("--json takes no value"));
      }
      json = true;
      continue;
    }
    if (name.substr(0, 1) == "-") {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "unknown flag ", name,
          tools::DidYouMean(name, {"--cache-dir", "--max-size", "--json",
                                   "--help", "--version"}),
          "; see --help")));
    }
    args.push_back(std::string(arg));
  }
  const std::vector<std::string> commands = {
      "stats", "list", "verify", "prune", "clear", "export", "import"};
  if (args.empty()) {
    return Fail(absl::InvalidArgumentError(
        "missing a command (stats, list, verify, prune, clear, export or "
        "import); see --help"));
  }
  if (std::find(commands.begin(), commands.end(), args[0]) == commands.end()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("unknown command \"", args[0], "\"",
                     tools::DidYouMean(args[0], commands), "; see --help")));
  }
  if (json && args[0] != "stats") {
    return Fail(absl::InvalidArgumentError("--json is for stats; see --help"));
  }
  if (!cache_dir_given) cache_dir = jit::DiskCacheOptions::FromEnv().dir;
  const jit::CacheDirectory dir(cache_dir);
  // The same refusal as the warmup's, before any command reads or writes.
  if (absl::Status trusted = dir.CheckTrusted(); !trusted.ok()) {
    return Fail(trusted);
  }
  const std::string& command = args[0];
  auto want_args = [&](size_t n, const char* form) -> bool {
    if (args.size() == n) return true;
    std::fprintf(stderr, "tessel-cache: usage: tessel-cache %s\n", form);
    return false;
  };
  if (command == "stats") {
    return want_args(1, "stats [--json]") ? Stats(dir, json) : 2;
  }
  if (command == "list") {
    return want_args(1, "list") ? List(dir) : 2;
  }
  if (command == "verify") {
    return want_args(1, "verify") ? Verify(dir) : 2;
  }
  if (command == "clear") {
    if (!want_args(1, "clear")) return 2;
    if (absl::Status s = dir.Clear(); !s.ok()) return Fail(s);
    std::printf("cleared %s\n", dir.version_dir().c_str());
    return 0;
  }
  if (command == "prune") {
    if (args.size() != 3 || args[1] != "--max-size") {
      want_args(0, "prune --max-size SIZE");
      return 2;
    }
    absl::StatusOr<uint64_t> max_bytes = ParseSize(args[2]);
    if (!max_bytes.ok()) return Fail(max_bytes.status());
    absl::StatusOr<uint64_t> freed = dir.Prune(*max_bytes);
    if (!freed.ok()) return Fail(freed.status());
    absl::StatusOr<uint64_t> left = dir.TotalBytes();
    std::printf("pruned %s; %s left\n", HumanBytes(*freed).c_str(),
                left.ok() ? HumanBytes(*left).c_str() : "?");
    return 0;
  }
  if (command == "export") {
    if (!want_args(2, "export FILE")) return 2;
    absl::StatusOr<tools::ArchiveStats> stats =
        tools::ExportCache(dir, args[1]);
    if (!stats.ok()) return Fail(stats.status());
    std::printf("exported %d entries (%s) to %s", stats->entries,
                HumanBytes(stats->bytes).c_str(), args[1].c_str());
    if (stats->records > 0) {
      std::printf(", with %d program records", stats->records);
    }
    if (stats->skipped > 0) {
      std::printf("; skipped %d corrupt", stats->skipped);
    }
    std::printf("\n");
    return 0;
  }
  if (command == "import") {
    if (!want_args(2, "import FILE")) return 2;
    absl::StatusOr<tools::ArchiveStats> stats =
        tools::ImportCache(dir, args[1]);
    if (!stats.ok()) return Fail(stats.status());
    std::printf("imported %d entries (%s) into %s; %d already present",
                stats->entries, HumanBytes(stats->bytes).c_str(),
                dir.version_dir().c_str(), stats->skipped);
    if (stats->records > 0) {
      std::printf("; %d program records", stats->records);
    }
    std::printf("\n");
    return 0;
  }
  return Fail(absl::InvalidArgumentError(
      absl::StrCat("unknown command \"", command, "\"; see --help")));
}

}  // namespace tessel
