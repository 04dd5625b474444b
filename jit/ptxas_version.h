// Which ptxas compiles PTX: its version keys every PTX entry of the cache
// (cache_key.h), so a fresh process needs it before its first cache hit.
// Asking (`ptxas --version`, a process) takes 4-7 ms, several times what a
// warm disk hit costs, so the answer is kept twice: per process, and on
// disk under the cache root, in tools/ptxas-<device>-<inode>-<size>-<mtime
// ns>.version. The name is the file's identity: a reinstalled or upgraded
// ptxas is a new file and is asked again. The memo is read only from a
// folder and file that are the user's and writable by no one else, and only
// when it holds a well-formed version; otherwise ptxas is asked.
//
//   std::string v = tessel::jit::PtxasVersion();  // "13.0.88"
#ifndef TESSEL_JIT_PTXAS_VERSION_H_
#define TESSEL_JIT_PTXAS_VERSION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tessel::jit {

// The version of PtxasPath()'s ptxas, "13.0.88"; "unknown" when there is
// none or it cannot say. The disk memo sits under DefaultCacheRoot(), and
// not at all with TESSEL_CACHE=off.
std::string PtxasVersion();

// <cache_root>/tools: where the version memo is kept (CacheDirectory::Clear
// empties it too).
std::string PtxasMemoFolder(const std::string& cache_root);

namespace internal {
// "13.0.88" from `ptxas --version`'s "Cuda compilation tools, release 13.0,
// V13.0.88"; "unknown" when no such line.
std::string ParsePtxasVersion(absl::string_view output);

// PtxasVersion() for the ptxas at `path`, without the per-process memo:
// the memo under `cache_root` (none when empty), else the program, whose
// answer is then written there.
std::string PtxasVersionOf(const std::string& path,
                           const std::string& cache_root);
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_PTXAS_VERSION_H_
