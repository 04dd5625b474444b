#include "src/runtime/program_cache.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "src/ir/structural.h"

namespace tessel::runtime {

bool ProgramCache::Applies(const CompileOptions& options) {
  if (!options.pass_config.dump_ir.empty()) return false;
  const char* env = std::getenv("TESSEL_DUMP_IR");
  return env == nullptr || *env == '\0';
}

ProgramCache::Key ProgramCache::KeyOf(const ir::Program& program,
                                      const CompileOptions& o) {
  return {ir::StructuralHash(program),
          absl::StrCat(o.target.ToString(), "|", o.pass_config.ToString(), "|",
                       o.fast_math, o.lineinfo, o.isolated, o.direct_ptx)};
}

uint64_t ProgramCache::CubinBytes(const KernelImpl& impl) {
  return impl.cubin.cubin ? impl.cubin.cubin->image.size() : 0;
}

std::shared_ptr<const KernelImpl> ProgramCache::Find(
    const Key& key, const ir::Program& program) {
  absl::MutexLock lock(&mu_);
  auto it = by_hash_.find(key.hash);
  if (it != by_hash_.end()) {
    for (Lru::iterator e : it->second) {
      if (e->key.options != key.options ||
          !ir::StructuralEqual(e->program, program)) {
        continue;
      }
      lru_.splice(lru_.begin(), lru_, e);
      ++stats_.hits;
      return e->impl;
    }
  }
  ++stats_.misses;
  return nullptr;
}

void ProgramCache::Insert(const Key& key, const ir::Program& program,
                          const KernelImpl& impl) {
  auto hit = std::make_shared<KernelImpl>(impl);
  hit->cubin.origin = jit::CubinOrigin::kMemory;
  absl::MutexLock lock(&mu_);
  for (Lru::iterator e : by_hash_[key.hash]) {
    if (e->key.options == key.options &&
        ir::StructuralEqual(e->program, program)) {
      return;  // another thread compiled it first
    }
  }
  lru_.push_front({key, program, std::move(hit)});
  by_hash_[key.hash].push_back(lru_.begin());
  ++stats_.entries;
  stats_.cubin_bytes += CubinBytes(*lru_.front().impl);
  EvictLocked();
}

void ProgramCache::EvictLocked() {
  while (lru_.size() > 1 && (lru_.size() > max_entries_ ||
                             stats_.cubin_bytes > max_cubin_bytes_)) {
    Lru::iterator last = std::prev(lru_.end());
    const uint64_t hash = last->key.hash;
    std::vector<Lru::iterator>& same = by_hash_[hash];
    same.erase(std::find(same.begin(), same.end(), last));
    if (same.empty()) by_hash_.erase(hash);
    stats_.cubin_bytes -= CubinBytes(*last->impl);
    --stats_.entries;
    lru_.erase(last);
  }
}

void ProgramCache::Clear() {
  absl::MutexLock lock(&mu_);
  lru_.clear();
  by_hash_.clear();
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
