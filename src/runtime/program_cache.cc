#include "src/runtime/program_cache.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "src/ir/structural.h"

namespace tessel::runtime {
namespace {

// Whether a and b are made of the same IR nodes (and so are structurally
// equal: nodes never change once made).
bool SameNodes(const ir::Program& a, const ir::Program& b) {
  if (!a.body.same_as(b.body) || a.name != b.name ||
      a.params.size() != b.params.size() || a.dims.size() != b.dims.size()) {
    return false;
  }
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (a.params[i].get() != b.params[i].get()) return false;
  }
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].get() != b.dims[i].get()) return false;
  }
  return true;
}

uint64_t BodySlot(const ir::Program& p) {
  return reinterpret_cast<uintptr_t>(p.body.get());
}

}  // namespace

bool ProgramCache::Applies(const CompileOptions& options) {
  if (!options.pass_config.dump_ir.empty()) return false;
  const char* env = std::getenv("TESSEL_DUMP_IR");
  return env == nullptr || *env == '\0';
}

ProgramCache::Key ProgramCache::KeyOf(const CompileOptions& o) {
  return {absl::StrCat(o.target.ToString(), "|", o.pass_config.ToString(), "|",
                       o.fast_math, o.lineinfo, o.isolated, o.direct_ptx),
          std::nullopt};
}

uint64_t ProgramCache::HashOf(Key& key, const ir::Program& program) {
  if (!key.hash) key.hash = ir::StructuralHash(program);
  return *key.hash;
}

uint64_t ProgramCache::CubinBytes(const KernelImpl& impl) {
  return impl.cubin.cubin ? impl.cubin.cubin->image.size() : 0;
}

void ProgramCache::Unindex(Index& index, uint64_t slot, Lru::iterator e) {
  std::vector<Lru::iterator>& same = index[slot];
  same.erase(std::find(same.begin(), same.end(), e));
  if (same.empty()) index.erase(slot);
}

template <typename Matches>
ProgramCache::Lru::iterator ProgramCache::Lookup(const Index& index,
                                                 uint64_t slot,
                                                 const std::string& options,
                                                 Matches matches,
                                                 Lru::iterator none) {
  auto it = index.find(slot);
  if (it == index.end()) return none;
  for (Lru::iterator e : it->second) {
    if (e->options == options && matches(e->program)) return e;
  }
  return none;
}

std::shared_ptr<const KernelImpl> ProgramCache::Find(
    Key& key, const ir::Program& program) {
  auto same = [&](const ir::Program& p) { return SameNodes(p, program); };
  auto equal = [&](const ir::Program& p) {
    return ir::StructuralEqual(p, program);
  };
  {
    absl::MutexLock lock(&mu_);
    Lru::iterator e =
        Lookup(by_body_, BodySlot(program), key.options, same, lru_.end());
    if (e != lru_.end()) {
      lru_.splice(lru_.begin(), lru_, e);
      ++stats_.hits;
      ++stats_.same_object_hits;
      return e->impl;
    }
  }
  const uint64_t hash = HashOf(key, program);  // outside the lock: O(program)
  absl::MutexLock lock(&mu_);
  Lru::iterator e = Lookup(by_hash_, hash, key.options, equal, lru_.end());
  if (e != lru_.end()) {
    lru_.splice(lru_.begin(), lru_, e);
    ++stats_.hits;
    return e->impl;
  }
  ++stats_.misses;
  return nullptr;
}

void ProgramCache::Insert(Key& key, const ir::Program& program,
                          const KernelImpl& impl) {
  auto hit = std::make_shared<KernelImpl>(impl);
  hit->cubin.origin = jit::CubinOrigin::kMemory;
  const uint64_t hash = HashOf(key, program);
  auto equal = [&](const ir::Program& p) {
    return ir::StructuralEqual(p, program);
  };
  absl::MutexLock lock(&mu_);
  if (Lookup(by_hash_, hash, key.options, equal, lru_.end()) != lru_.end()) {
    return;  // another thread compiled it first
  }
  lru_.push_front({key.options, hash, program, std::move(hit)});
  by_hash_[hash].push_back(lru_.begin());
  by_body_[BodySlot(program)].push_back(lru_.begin());
  ++stats_.entries;
  stats_.cubin_bytes += CubinBytes(*lru_.front().impl);
  EvictLocked();
}

void ProgramCache::EvictLocked() {
  while (lru_.size() > 1 && (lru_.size() > max_entries_ ||
                             stats_.cubin_bytes > max_cubin_bytes_)) {
    Lru::iterator last = std::prev(lru_.end());
    Unindex(by_hash_, last->hash, last);
    Unindex(by_body_, BodySlot(last->program), last);
    stats_.cubin_bytes -= CubinBytes(*last->impl);
    --stats_.entries;
    lru_.erase(last);
  }
}

void ProgramCache::Clear() {
  absl::MutexLock lock(&mu_);
  lru_.clear();
  by_hash_.clear();
  by_body_.clear();
  stats_.entries = 0;
  stats_.cubin_bytes = 0;
}

ProgramCache::Stats ProgramCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

ProgramCache& ProgramCache::Global() {
  static auto* cache = new ProgramCache();
  return *cache;
}

}  // namespace tessel::runtime
