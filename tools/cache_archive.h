// One-file export and import of a disk cache, to ship a warmed cache to
// deployment machines:  tessel-cache export cache.tar-ish  /  import.
//
//   ASSIGN_OR_RETURN(ArchiveStats s, ExportCache(directory, "cache.tsc"));
//   ASSIGN_OR_RETURN(ArchiveStats s, ImportCache(other_directory,
//   "cache.tsc"));
//
// Format (text headers, raw bytes):
//   "tessel-cache-archive 1\n"
//   per file:  "file <path under the cache root> <size>\n" <size bytes> "\n"
//   last:      "end <files> <XXH3-64 of every path and content, hex>\n"
// Only whole entries travel (their .cubin checked first: checksum, and
// stamped with the key its name gives): <key>.cu, .json,
// then .cubin; after them the program index's records (programs/<2 hex>/
// <key>, each naming its key; an imported one replaces the one there). Import
// checks the whole archive (paths, sizes, checksum) before writing anything,
// writes each file through a temp file and a rename
// (.cubin first: the entry is whole once it is there, and a concurrent
// `verify` never sees its .cu without it) and keeps entries that are already
// there and sound.
#ifndef TESSEL_TOOLS_CACHE_ARCHIVE_H_
#define TESSEL_TOOLS_CACHE_ARCHIVE_H_

#include <string>

#include "absl/status/statusor.h"
#include "jit/cache_directory.h"

namespace tessel::tools {

struct ArchiveStats {
  int entries = 0;     // exported, or imported (written)
  int skipped = 0;     // export: corrupt; import: already present
  int records = 0;     // the program index's, exported or imported
  uint64_t bytes = 0;  // file bytes written
};

absl::StatusOr<ArchiveStats> ExportCache(const jit::CacheDirectory& directory,
                                         const std::string& archive_path);

absl::StatusOr<ArchiveStats> ImportCache(const jit::CacheDirectory& directory,
                                         const std::string& archive_path);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_CACHE_ARCHIVE_H_
