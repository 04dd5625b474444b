// The bytes of a disk cache entry (<key>.cubin): a fixed header, then the
// payload: the entry's stamp (whose entry it is), the lowered entry name and
// the cubin image.
//
//   const EntryStamp stamp = MakeEntryStamp(key, "sm_90a", "gemm");
//   std::string bytes = tessel::jit::EncodeCacheEntry(stamp, cubin);
//   absl::StatusOr<Cubin> back = tessel::jit::DecodeCacheEntry(bytes, stamp);
//
// Header, little-endian: magic "TSLCUBIN", u32 schema, u32 reserved,
// u64 payload size, u64 XXH3-64 of the payload. Payload: u32-length-prefixed
// key, arch, NVRTC version, tessel version, entry, lowered entry; then the
// image. A truncated, foreign or damaged entry, or one whose stamp is not the
// expected one (another key's file copied over this one), does not decode:
// the cache treats it as a miss.
#ifndef TESSEL_JIT_CACHE_ENTRY_H_
#define TESSEL_JIT_CACHE_ENTRY_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

inline constexpr size_t kCacheEntryHeaderSize = 32;

// What an entry was compiled as. The key alone decides (it hashes the
// others); they are kept so that a mismatch can say what the file holds.
struct EntryStamp {
  std::string key;  // 32 hex digits: ComputeCacheKey
  std::string arch;
  std::string nvrtc_version;  // this NVRTC's, PTX entries too (the key
                              // holds their ptxas's version)
  std::string tessel_version;
  std::string entry;  // the source's entry name (CudaSource::entry)
  friend bool operator==(const EntryStamp&, const EntryStamp&) = default;
};

// The stamp of an entry compiled by this process (this NVRTC, this tessel).
EntryStamp MakeEntryStamp(std::string key, std::string arch, std::string entry);

std::string EncodeCacheEntry(const EntryStamp& stamp, const Cubin& cubin);

struct DecodedEntry {
  EntryStamp stamp;
  Cubin cubin;  // image, lowered entry, arch; no log, compile_ms 0
};

// The header, checksum and payload layout only: whose entry it is is not
// checked. DataLoss saying what is wrong.
absl::StatusOr<DecodedEntry> ParseCacheEntry(absl::string_view bytes);

// ParseCacheEntry, and the stamp must be `expected`; otherwise DataLoss
// naming the field that differs ("holds the entry of key ...").
absl::StatusOr<Cubin> DecodeCacheEntry(absl::string_view bytes,
                                       const EntryStamp& expected);

// The stamp and lowered entry from the first bytes of an entry (the header
// and the strings, no checksum): what `tessel-cache list` shows without
// reading whole cubins. Fails when `prefix` is too short or not an entry.
absl::StatusOr<DecodedEntry> PeekCacheEntry(absl::string_view prefix);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_ENTRY_H_
