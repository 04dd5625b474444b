// The kernel cache's in-process cubins: by key, with the least recently used
// evicted once they take more than a byte budget, so that a long-running
// host compiling many shapes does not grow without bound. Evicted cubins are
// still on disk (the next request is a disk hit), and a caller holding one
// keeps it alive (shared_ptr). Not thread-safe: KernelCache locks around it.
//
//   CubinMemory memory(256 << 20);
//   memory.Insert(key, cubin);
//   if (std::shared_ptr<const Cubin> hit = memory.Find(key)) ...
#ifndef TESSEL_JIT_CUBIN_MEMORY_H_
#define TESSEL_JIT_CUBIN_MEMORY_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

class CubinMemory {
 public:
  // budget_bytes <= 0: no bound.
  explicit CubinMemory(int64_t budget_bytes) : budget_(budget_bytes) {}

  // The cubin for key, now the most recently used; nullptr when absent.
  std::shared_ptr<const Cubin> Find(const std::string& key);
  // Adds (or replaces) key's cubin, then evicts the least recently used
  // others while over budget. The newest entry stays even when it alone is
  // over the budget.
  void Insert(const std::string& key, std::shared_ptr<const Cubin> cubin);
  void Clear();

  int64_t bytes() const { return bytes_; }
  size_t size() const { return entries_.size(); }

  // What an entry counts against the budget.
  static int64_t EntryBytes(const std::string& key, const Cubin& cubin);

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const Cubin> cubin;
    int64_t bytes = 0;
  };
  void Erase(std::list<Entry>::iterator it);

  int64_t budget_;
  int64_t bytes_ = 0;
  std::list<Entry> lru_;  // front: most recently used
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> entries_;
};

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CUBIN_MEMORY_H_
