#include "jit/ptxas_version.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "jit/cache_files.h"
#include "jit/disk_cache.h"
#include "jit/ptx_compile.h"
#include "jit/subprocess.h"

namespace tessel::jit {
namespace {

bool WellFormed(absl::string_view version) {
  return !version.empty() && absl::ascii_isdigit(version.front()) &&
         absl::ascii_isdigit(version.back()) &&
         version.find_first_not_of("0123456789.") == absl::string_view::npos;
}

// <root>/tools/ptxas-<dev>-<ino>-<size>-<mtime ns>.version; empty when
// `path` cannot be stat'ed.
std::string MemoPath(const std::string& path, const std::string& root) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  const int64_t mtime_ns =
      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  return (std::filesystem::path(PtxasMemoFolder(root)) /
          absl::StrCat("ptxas-", st.st_dev, "-", st.st_ino, "-", st.st_size,
                       "-", mtime_ns, ".version"))
      .string();
}

std::string ReadMemo(const std::string& memo) {
  const std::string folder = std::filesystem::path(memo).parent_path();
  if (!UnsafeFolderReason(folder).empty() || !UnsafeFileReason(memo).empty()) {
    return "";
  }
  absl::StatusOr<std::string> text = ReadWholeFile(memo);
  if (!text.ok()) return "";
  const std::string version(absl::StripAsciiWhitespace(*text));
  return WellFormed(version) ? version : "";
}

// Best effort: a root that is not the user's, or cannot be written, keeps
// no memo.
void WriteMemo(const std::string& memo, const std::string& root,
               const std::string& version) {
  if (std::filesystem::exists(root) && !UnsafeFolderReason(root).empty()) {
    return;
  }
  const std::string folder = std::filesystem::path(memo).parent_path();
  if (!MakePrivateDirs(folder).ok() || !UnsafeFolderReason(folder).empty()) {
    return;
  }
  (void)WriteFileAtomically(memo, version + "\n");
}

std::string AskPtxas(const std::string& path) {
  absl::StatusOr<ProgramRun> run = RunProgram({path, "--version"});
  if (run.ok() && WIFEXITED(run->wait_status) &&
      WEXITSTATUS(run->wait_status) == 0) {
    return internal::ParsePtxasVersion(run->output);
  }
  return "unknown";
}

}  // namespace

std::string PtxasMemoFolder(const std::string& cache_root) {
  return (std::filesystem::path(cache_root) / "tools").string();
}

std::string PtxasVersion() {
  static absl::Mutex mu(absl::kConstInit);
  // ptxas path -> version; guarded by mu.
  static auto* const versions =
      new absl::flat_hash_map<std::string, std::string>();
  absl::StatusOr<std::string> path = KnownPtxasPath();
  if (!path.ok()) return "unknown";
  {
    absl::MutexLock lock(&mu);
    if (auto it = versions->find(*path); it != versions->end()) {
      return it->second;
    }
  }
  // Asked outside the lock: a child forked meanwhile (an isolated compile)
  // never inherits it held. Two first callers may both ask; same answer.
  const DiskCacheOptions disk = DiskCacheOptions::FromEnv();
  std::string version =
      internal::PtxasVersionOf(*path, disk.enabled ? disk.dir : "");
  absl::MutexLock lock(&mu);
  return versions->try_emplace(*path, std::move(version)).first->second;
}

namespace internal {

std::string ParsePtxasVersion(absl::string_view output) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StrContains(line, "compilation tools")) continue;
    const size_t at = line.rfind(", V");
    if (at == absl::string_view::npos) continue;
    absl::string_view version = absl::StripAsciiWhitespace(line.substr(at + 3));
    if (WellFormed(version)) return std::string(version);
  }
  return "unknown";
}

std::string PtxasVersionOf(const std::string& path,
                           const std::string& cache_root) {
  const std::string memo = cache_root.empty() ? "" : MemoPath(path, cache_root);
  if (!memo.empty()) {
    if (std::string version = ReadMemo(memo); !version.empty()) return version;
  }
  std::string version = AskPtxas(path);
  // "unknown" is not remembered: the next process asks again.
  if (!memo.empty() && version != "unknown") {
    WriteMemo(memo, cache_root, version);
  }
  return version;
}

}  // namespace internal

}  // namespace tessel::jit
