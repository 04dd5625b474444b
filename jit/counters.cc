#include "jit/counters.h"

#include <atomic>

namespace tessel::jit {
namespace {

constexpr int kCounters = 8;
std::atomic<uint64_t> g_counters[kCounters];

uint64_t Read(internal::Counter counter) {
  return g_counters[static_cast<int>(counter)].load(std::memory_order_relaxed);
}

}  // namespace

JitCounters GetJitCounters() {
  using internal::Counter;
  JitCounters counters;
  counters.nvrtc_compiles = Read(Counter::kNvrtcCompiles);
  counters.memory_hits = Read(Counter::kMemoryHits);
  counters.disk_hits = Read(Counter::kDiskHits);
  counters.misses = Read(Counter::kMisses);
  counters.corrupt_entries = Read(Counter::kCorruptEntries);
  counters.untrusted_files = Read(Counter::kUntrustedFiles);
  counters.module_loads = Read(Counter::kModuleLoads);
  counters.index_hits = Read(Counter::kIndexHits);
  return counters;
}

namespace internal {
void Count(Counter counter) {
  g_counters[static_cast<int>(counter)].fetch_add(1, std::memory_order_relaxed);
}
}  // namespace internal

}  // namespace tessel::jit
