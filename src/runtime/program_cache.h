// compile()'s memo in front of the passes: a program compiled before with
// the same target and options comes back without lowering again.
//
//   ProgramCache& cache = ProgramCache::Global();
//   ProgramCache::Key key = ProgramCache::KeyOf(options);
//   if (auto hit = cache.Find(key, program)) return CompiledKernel(hit);
//   ... lower, codegen, NVRTC ...
//   cache.Insert(key, program, impl);
//
// Keyed on the program's structural hash, confirmed with structural equality
// (so renamed variables hit, a changed constant misses), and on the target,
// the pass config, fast_math, lineinfo and isolation. The same program
// object compiled again (its IR nodes, which never change, are the ones an
// entry holds) hits before any hashing: a repeat costs a lookup. Process-local
// and bounded (least recently used entries go first); the disk cache below it
// stays keyed on the generated source, so nothing here outlives the process.
// Compiles that dump IR skip it: a dump must come from a real run.
#ifndef TESSEL_SRC_RUNTIME_PROGRAM_CACHE_H_
#define TESSEL_SRC_RUNTIME_PROGRAM_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "src/ir/program.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/compile.h"

namespace tessel::runtime {

class ProgramCache {
 public:
  struct Stats {
    uint64_t hits = 0, misses = 0, entries = 0, cubin_bytes = 0;
    uint64_t same_object_hits = 0;  // of hits: found without hashing
  };

  explicit ProgramCache(size_t max_entries = 1024,
                        uint64_t max_cubin_bytes = uint64_t{256} << 20)
      : max_entries_(max_entries), max_cubin_bytes_(max_cubin_bytes) {}

  // What a lookup compares besides the program: the options as text, and
  // the program's structural hash once a lookup needed it (a miss then does
  // not hash the program again to insert it).
  struct Key {
    std::string options;  // target, pass config and the flags
    std::optional<uint64_t> hash;
  };
  static Key KeyOf(const CompileOptions& options);

  // The kernel a structurally equal program compiled to, or null.
  std::shared_ptr<const KernelImpl> Find(Key& key, const ir::Program& program);
  // Keeps `impl` for later Finds; hits report the cubin's origin as memory.
  void Insert(Key& key, const ir::Program& program, const KernelImpl& impl);
  // Whether compiles with these options may use the cache at all.
  static bool Applies(const CompileOptions& options);

  // Forgets every entry (tests that stand in for a fresh process).
  void Clear();

  Stats stats() const;
  static ProgramCache& Global();

 private:
  struct Entry {
    std::string options;
    uint64_t hash;
    ir::Program program;
    std::shared_ptr<const KernelImpl> impl;
  };
  using Lru = std::list<Entry>;
  using Index = absl::flat_hash_map<uint64_t, std::vector<Lru::iterator>>;

  static uint64_t HashOf(Key& key, const ir::Program& program);
  // The entry for these options among `bucket` whose program `matches`.
  template <typename Matches>
  static Lru::iterator Lookup(const Index& index, uint64_t slot,
                              const std::string& options, Matches matches,
                              Lru::iterator none);
  static void Unindex(Index& index, uint64_t slot, Lru::iterator e);

  static uint64_t CubinBytes(const KernelImpl& impl);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_entries_;
  const uint64_t max_cubin_bytes_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  // Structural hash -> the entries with that hash (collisions are rare).
  Index by_hash_ ABSL_GUARDED_BY(mu_);
  // The program's body node -> the entries holding that very node.
  Index by_body_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_PROGRAM_CACHE_H_
