// Disk-cache hits and misses of every process that used a cache folder, so
// that `tessel-cache stats` can say how well the cache serves (the process
// counters of jit/counters.h end with their process). Kept in
// <version dir>/usage as "hits misses" (fixed width), updated under flock;
// best effort: a folder that cannot be written only loses counts.
//
//   tessel::jit::RecordCacheUsage(dir.version_dir(), /*hit=*/true);
//   tessel::jit::CacheUsage u = tessel::jit::ReadCacheUsage(dir.version_dir());
#ifndef TESSEL_JIT_CACHE_USAGE_H_
#define TESSEL_JIT_CACHE_USAGE_H_

#include <cstdint>
#include <string>

namespace tessel::jit {

struct CacheUsage {
  uint64_t hits = 0;    // a compile found its kernel on disk
  uint64_t misses = 0;  // ... did not, and NVRTC compiled it
};

void RecordCacheUsage(const std::string& version_dir, bool hit);
// The record's path ("<version_dir>/usage"); `tessel-cache clear` removes it.
std::string CacheUsagePath(const std::string& version_dir);
// Zeros when there is no record, or it cannot be trusted.
CacheUsage ReadCacheUsage(const std::string& version_dir);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_USAGE_H_
