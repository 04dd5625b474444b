// The bytes of a disk cache entry (<key>.cubin): a fixed header, then the
// payload (entry name, arch, cubin image).
//
//   std::string bytes = tessel::jit::EncodeCacheEntry(cubin);
//   std::optional<Cubin> back = tessel::jit::DecodeCacheEntry(bytes);
//
// Header, little-endian: magic "TSLCUBIN", u32 schema, u32 reserved,
// u64 payload size, u64 XXH3-64 of the payload. A truncated, foreign or
// damaged entry decodes to nullopt: the cache treats it as a miss.
#ifndef TESSEL_JIT_CACHE_ENTRY_H_
#define TESSEL_JIT_CACHE_ENTRY_H_

#include <cstddef>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "jit/nvrtc.h"

namespace tessel::jit {

inline constexpr size_t kCacheEntryHeaderSize = 32;

std::string EncodeCacheEntry(const Cubin& cubin);

// The cubin (image, lowered entry, arch; no log, compile_ms 0), or nullopt.
std::optional<Cubin> DecodeCacheEntry(absl::string_view bytes);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_ENTRY_H_
