// A disk cache folder seen as a set of entries: what `tessel-cache` and the
// eviction in DiskCache work with.
//
//   tessel::jit::CacheDirectory dir(tessel::jit::DefaultCacheRoot());
//   ASSIGN_OR_RETURN(auto entries, dir.List());
//   ASSIGN_OR_RETURN(auto report, dir.Verify());  // removes corrupt entries
//   ASSIGN_OR_RETURN(uint64_t freed, dir.Prune(512 << 20));
//
// Layout: <root>/v<schema>/<first 2 hex of key>/<key>.{cubin,json,cu}.
// <key>.cubin is the entry; .json (metadata) and .cu (the source) sit beside
// it. Temp files are ".<key>.<ext>.tmp.<pid>.<n>".
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
  std::string entry;       // from the .json, when readable
  std::string arch;        // from the .json, when readable
};

struct CacheVerifyReport {
  int good = 0;
  std::vector<std::string> removed;  // keys of corrupt entries
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

  // Oldest use first. An absent folder lists empty.
  absl::StatusOr<std::vector<CacheEntryInfo>> List() const;
  // Reads every .cubin and checks its header and checksum; corrupt ones are
  // removed (with their .json and .cu) when `remove_corrupt`.
  absl::StatusOr<CacheVerifyReport> Verify(bool remove_corrupt = true) const;
  // Removes a key's files; OK when there were none.
  absl::Status Remove(const std::string& key) const;
  // Bytes of all files under version_dir().
  absl::StatusOr<uint64_t> TotalBytes() const;
  // Removes every entry (and stray temp files).
  absl::Status Clear() const;
  // Removes least recently used entries until at most `max_bytes` remain, and
  // temp files older than an hour (left by a killed writer). Returns the
  // bytes freed.
  absl::StatusOr<uint64_t> Prune(uint64_t max_bytes) const;

 private:
  std::string root_;
  std::string version_dir_;
};

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_DIRECTORY_H_
