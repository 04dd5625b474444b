// A disk cache folder seen as a set of entries: what `tessel-cache` and the
// eviction in DiskCache work with.
//
//   tessel::jit::CacheDirectory dir(tessel::jit::DefaultCacheRoot());
//   RETURN_IF_ERROR(dir.CheckTrusted());
//   ASSIGN_OR_RETURN(auto entries, dir.List());
//   ASSIGN_OR_RETURN(auto report, dir.Verify());  // removes unsound entries
//   ASSIGN_OR_RETURN(uint64_t freed, dir.Prune(512 << 20));
//
// Layout: <root>/v<schema>/<first 2 hex of key>/<key>.{cubin,json,cu}.
// <key>.cubin is the entry, stamped with its key (cache_entry.h); .json
// (metadata for people, never relied on) and .cu (the source) sit beside it.
// Temp files are ".<key>.<ext>.tmp.<pid>.<n>". Every operation first checks
// that the root and version folder are the user's and writable by no one
// else (FailedPrecondition otherwise, touching nothing); shard folders and
// files that fail that check are not read.
#ifndef TESSEL_JIT_CACHE_DIRECTORY_H_
#define TESSEL_JIT_CACHE_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tessel::jit {

struct CacheEntryInfo {
  std::string key;
  std::string cubin_path;  // empty for a leftover without its .cubin
  uint64_t bytes = 0;      // all of the key's files
  absl::Time last_used;    // the .cubin's mtime (touched on every hit)
  std::string entry;       // from the entry's stamp
  std::string arch;        // from the entry's stamp
  // Why the entry will not be loaded (an untrusted file or folder, another
  // key's entry, not an entry); empty when its stamp looks right. List()
  // does not read whole cubins: Verify() checks the checksums.
  std::string problem;
};

struct CacheVerifyReport {
  int good = 0;
  // Keys of entries that were not sound: damaged, another key's entry, an
  // older format, or in a file or folder that is not trusted.
  std::vector<std::string> removed;
  // Keys whose .cu or .json was left without its .cubin (a full disk).
  std::vector<std::string> orphans;
  // Keys of sound entries whose .json disagreed with the entry.
  std::vector<std::string> sidecars;
  // Temp files of writes that will not finish (their process is gone, or
  // they are over 10 minutes old): removed.
  int stale_temps = 0;
  // One line per finding: "<key>: <why>".
  std::vector<std::string> problems;

  bool clean() const {
    return removed.empty() && orphans.empty() && sidecars.empty();
  }
};

class CacheDirectory {
 public:
  // `root` as in DiskCacheOptions::dir (without v<schema>).
  explicit CacheDirectory(std::string root);

  const std::string& root() const { return root_; }
  // <root>/v<schema>
  const std::string& version_dir() const { return version_dir_; }
  // <version_dir>/<2 hex>/<key><extension>
  std::string EntryPath(const std::string& key,
                        const std::string& extension) const;

  // OK when the root and version folder are absent or may be trusted;
  // otherwise FailedPrecondition "the cache folder R cannot be used: why"
  // naming the fix. An empty root is refused too.
  absl::Status CheckTrusted() const;

  // Whether the key's entry is there, trusted, whole and this key's. Reads
  // only (no touch, no removal).
  bool HasSoundEntry(const std::string& key) const;

  // Oldest use first. An absent folder lists empty.
  absl::StatusOr<std::vector<CacheEntryInfo>> List() const;
  // Reads every .cubin and checks its header, checksum and stamp, and each
  // .json against its entry. With `remove`, unsound entries, orphaned
  // .cu/.json files (whose key is not locked by a writer) and disagreeing
  // .json files are removed.
  absl::StatusOr<CacheVerifyReport> Verify(bool remove = true) const;
  // Removes a key's files; OK when there were none.
  absl::Status Remove(const std::string& key) const;
  // Bytes of all files under version_dir().
  absl::StatusOr<uint64_t> TotalBytes() const;
  // Removes every entry (and stray temp files, the program index's records).
  absl::Status Clear() const;
  // Removes least recently used entries until at most `max_bytes` remain, and
  // temp files older than an hour (left by a killed writer). Returns the
  // bytes freed.
  absl::StatusOr<uint64_t> Prune(uint64_t max_bytes) const;
  // Prune for the cache's own size limit (DiskCache::Store): when it removes
  // an entry it also records the time, so that a tool that finds entries
  // gone can tell the size limit from someone else's removal.
  absl::StatusOr<uint64_t> EvictForSizeLimit(uint64_t max_bytes) const;
  // The last time EvictForSizeLimit removed an entry here; InfinitePast when
  // never.
  absl::Time LastSizeLimitEviction() const;

 private:
  absl::StatusOr<uint64_t> PruneTo(uint64_t max_bytes,
                                   bool for_size_limit) const;

  std::string root_;
  std::string version_dir_;
};

// Why an empty cache root cannot be used (names TESSEL_CACHE_DIR when it is
// set but empty).
std::string EmptyCacheRootReason();

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_DIRECTORY_H_
