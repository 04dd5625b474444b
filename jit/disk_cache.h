// The on-disk cubin cache, shared by processes and by runs.
//
//   tessel::jit::DiskCache cache(tessel::jit::DiskCacheOptions::FromEnv());
//   const EntryStamp stamp = MakeEntryStamp(key, arch, source.entry);
//   if (std::optional<Cubin> hit = cache.Load(stamp)) return *hit;
//   auto lock = cache.LockKey(key);  // other processes wait here
//   if (std::optional<Cubin> hit = cache.Load(stamp)) return *hit;  // re-check
//   ... compile ...
//   absl::Status stored = cache.Store(key, cubin, source, options);
//
// Never fails a compile: a missing, unsafe or unwritable folder, a full disk
// or a damaged entry is a warning or a miss (Store's status says whether the
// entry was written, for a caller such as the warmup that needs it). Readers
// never lock: entries appear whole through a rename. Nothing is read from (or
// written to) a folder or file that is another user's or writable by group or
// others: the root, v<schema>, the shard folder, the entry and the lock file
// are checked on every use, and a refused root is left as it was (nothing is
// created in it). An entry whose stamp is not the expected one (another
// key's file copied over it) is a miss and is removed.
#ifndef TESSEL_JIT_DISK_CACHE_H_
#define TESSEL_JIT_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jit/cache_directory.h"
#include "jit/cache_entry.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

struct DiskCacheOptions {
  bool enabled = true;
  std::string dir;  // the root; v<schema>/ is made inside it
  uint64_t max_bytes = uint64_t{1} << 30;
  absl::Duration lock_timeout = absl::Minutes(2);

  // TESSEL_CACHE=off disables; TESSEL_CACHE_DIR, else
  // $XDG_CACHE_HOME/tessel, else ~/.cache/tessel; TESSEL_CACHE_MAX_BYTES
  // (a number with an optional K, M or G suffix). A TESSEL_CACHE_DIR that is
  // set but empty gives an empty `dir`: the cache is then off with a warning
  // (EmptyCacheRootReason), not quietly in the default folder.
  static DiskCacheOptions FromEnv();
};

// The folder FromEnv() picks (without looking at TESSEL_CACHE); empty when
// TESSEL_CACHE_DIR is set but empty.
std::string DefaultCacheRoot();

class DiskCache {
 public:
  explicit DiskCache(DiskCacheOptions options);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // False when switched off or when the folder is unusable (see reason()).
  bool enabled() const { return enabled_; }
  const std::string& disabled_reason() const { return disabled_reason_; }
  const DiskCacheOptions& options() const { return options_; }
  const CacheDirectory& directory() const { return directory_; }

  // The entry stamped `expected`, or nullopt. A damaged entry, or one
  // stamped otherwise, is removed and counted (corrupt_entries); one in an
  // untrusted file or folder is left, with a warning naming it.
  std::optional<Cubin> Load(const EntryStamp& expected);

  // Writes <key>.cu (the source text, PTX too), <key>.json and then
  // <key>.cubin (temp file, fsync, rename), then evicts least recently used
  // entries above max_bytes. Not OK when nothing was stored (the cache is off,
  // its folder is untrusted or cannot be written: a full disk), with the
  // warning it printed once; the size limit evicting the new entry again is OK
  // (it was stored).
  absl::Status Store(const std::string& key, const Cubin& cubin,
                     const CudaSource& source,
                     const std::vector<std::string>& options);

  // An advisory lock on the key (flock on <key>.lock), held while the
  // returned object lives. nullptr when the cache is off, or when the lock
  // could not be had within lock_timeout (the caller compiles anyway).
  class KeyLock;
  std::unique_ptr<KeyLock> LockKey(const std::string& key);

  // Small records beside the entries, for layers above the cache (the
  // program index, src/runtime/program_index.h): <root>/programs/<2 hex>/
  // <key>, with the entries' trust checks and atomic writes. Nothing is
  // relied on: the caller checks what it reads, and a record whose entry is
  // gone is the caller's miss. RecordPath is where `key`'s record lives.
  std::string RecordPath(const std::string& key) const;
  std::optional<std::string> LoadRecord(const std::string& key);
  void StoreRecord(const std::string& key, absl::string_view bytes);

 private:
  void Disable(std::string reason);
  void WarnOnce(const std::string& what);
  // A warning per distinct untrusted path (a few at most).
  void WarnUntrusted(const std::string& why);
  // Empty when the root, version and shard folders of `key` may be used.
  std::string UntrustedFolders(const std::string& key) const;
  absl::Status WriteAtomically(const std::string& path,
                               absl::string_view bytes);

  DiskCacheOptions options_;
  CacheDirectory directory_;
  bool enabled_ = false;
  std::string disabled_reason_;
  std::atomic<bool> warned_{false};
  absl::Mutex untrusted_mu_;
  std::set<std::string> untrusted_warned_ ABSL_GUARDED_BY(untrusted_mu_);
};

class DiskCache::KeyLock {
 public:
  KeyLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~KeyLock();
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

 private:
  int fd_;
  std::string path_;
};

}  // namespace tessel::jit

#endif  // TESSEL_JIT_DISK_CACHE_H_
