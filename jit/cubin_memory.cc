#include "jit/cubin_memory.h"

#include <utility>

namespace tessel::jit {

int64_t CubinMemory::EntryBytes(const std::string& key, const Cubin& cubin) {
  return static_cast<int64_t>(key.size() + cubin.image.size() +
                              cubin.lowered_entry.size() + cubin.arch.size() +
                              cubin.log.size());
}

std::shared_ptr<const Cubin> CubinMemory::Find(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->cubin;
}

void CubinMemory::Insert(const std::string& key,
                         std::shared_ptr<const Cubin> cubin) {
  if (auto it = entries_.find(key); it != entries_.end()) Erase(it->second);
  const int64_t bytes = EntryBytes(key, *cubin);
  lru_.push_front(Entry{key, std::move(cubin), bytes});
  entries_[key] = lru_.begin();
  bytes_ += bytes;
  while (budget_ > 0 && bytes_ > budget_ && lru_.size() > 1) {
    Erase(std::prev(lru_.end()));
  }
}

void CubinMemory::Clear() {
  lru_.clear();
  entries_.clear();
  bytes_ = 0;
}

void CubinMemory::Erase(std::list<Entry>::iterator it) {
  bytes_ -= it->bytes;
  entries_.erase(it->key);
  lru_.erase(it);
}

}  // namespace tessel::jit
