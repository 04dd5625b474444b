#include "jit/cache_entry.h"

#include <xxhash.h>

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/cache_key.h"

namespace tessel::jit {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'C', 'U', 'B', 'I', 'N'};

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}
void PutU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}
void PutString(std::string& out, absl::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}
uint64_t GetLe(absl::string_view bytes, size_t offset, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    value |= uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  }
  return value;
}

// Reads a u32-length-prefixed string from the front of `in`.
bool TakeString(absl::string_view& in, std::string& out) {
  if (in.size() < 4) return false;
  const uint64_t size = GetLe(in, 0, 4);
  in.remove_prefix(4);
  if (in.size() < size) return false;
  out = std::string(in.substr(0, size));
  in.remove_prefix(size);
  return true;
}

absl::Status Bad(absl::string_view why) {
  return absl::DataLossError(absl::StrCat("not a sound cache entry: ", why));
}

// Checks the header; on success `payload` is what follows it.
absl::Status ReadHeader(absl::string_view bytes, absl::string_view& payload,
                        uint64_t& payload_size, uint64_t& checksum) {
  if (bytes.size() < kCacheEntryHeaderSize) return Bad("shorter than a header");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Bad("no TSLCUBIN magic");
  }
  if (const uint64_t schema = GetLe(bytes, 8, 4);
      schema != kCacheSchemaVersion) {
    return Bad(absl::StrCat("format version ", schema, ", this tessel reads ",
                            kCacheSchemaVersion));
  }
  payload_size = GetLe(bytes, 16, 8);
  checksum = GetLe(bytes, 24, 8);
  payload = bytes.substr(kCacheEntryHeaderSize);
  return absl::OkStatus();
}

// The stamp and lowered entry at the front of `payload`, which then holds
// the image.
absl::Status TakeStrings(absl::string_view& payload, DecodedEntry& out) {
  EntryStamp& s = out.stamp;
  if (!TakeString(payload, s.key) || !TakeString(payload, s.arch) ||
      !TakeString(payload, s.nvrtc_version) ||
      !TakeString(payload, s.tessel_version) || !TakeString(payload, s.entry) ||
      !TakeString(payload, out.cubin.lowered_entry)) {
    return Bad("its stamp is cut short");
  }
  out.cubin.arch = s.arch;
  return absl::OkStatus();
}

}  // namespace

EntryStamp MakeEntryStamp(std::string key, std::string arch,
                          std::string entry) {
  static const std::string* const nvrtc = new std::string(NvrtcVersion());
  return EntryStamp{.key = std::move(key),
                    .arch = std::move(arch),
                    .nvrtc_version = *nvrtc,
                    .tessel_version = TesselVersion(),
                    .entry = std::move(entry)};
}

std::string EncodeCacheEntry(const EntryStamp& stamp, const Cubin& cubin) {
  std::string payload;
  PutString(payload, stamp.key);
  PutString(payload, stamp.arch);
  PutString(payload, stamp.nvrtc_version);
  PutString(payload, stamp.tessel_version);
  PutString(payload, stamp.entry);
  PutString(payload, cubin.lowered_entry);
  payload += cubin.image;
  std::string out(kMagic, sizeof(kMagic));
  PutU32(out, kCacheSchemaVersion);
  PutU32(out, 0);
  PutU64(out, payload.size());
  PutU64(out, XXH3_64bits(payload.data(), payload.size()));
  out += payload;
  return out;
}

absl::StatusOr<DecodedEntry> ParseCacheEntry(absl::string_view bytes) {
  absl::string_view payload;
  uint64_t payload_size = 0, checksum = 0;
  if (absl::Status s = ReadHeader(bytes, payload, payload_size, checksum);
      !s.ok()) {
    return s;
  }
  if (payload.size() != payload_size) return Bad("its size is wrong");
  if (XXH3_64bits(payload.data(), payload.size()) != checksum) {
    return Bad("its checksum does not match");
  }
  DecodedEntry out;
  if (absl::Status s = TakeStrings(payload, out); !s.ok()) return s;
  if (payload.empty()) return Bad("it holds no image");
  out.cubin.image = std::string(payload);
  return out;
}

absl::StatusOr<Cubin> DecodeCacheEntry(absl::string_view bytes,
                                       const EntryStamp& expected) {
  absl::StatusOr<DecodedEntry> entry = ParseCacheEntry(bytes);
  if (!entry.ok()) return entry.status();
  const EntryStamp& got = entry->stamp;
  auto differs = [&](const char* what, const std::string& want,
                     const std::string& have) {
    return absl::DataLossError(absl::StrCat("holds another entry: ", what, " ",
                                            have, ", expected ", want));
  };
  if (got.key != expected.key) return differs("key", expected.key, got.key);
  if (got.arch != expected.arch) {
    return differs("arch", expected.arch, got.arch);
  }
  if (got.nvrtc_version != expected.nvrtc_version) {
    return differs("NVRTC", expected.nvrtc_version, got.nvrtc_version);
  }
  if (got.tessel_version != expected.tessel_version) {
    return differs("tessel", expected.tessel_version, got.tessel_version);
  }
  if (got.entry != expected.entry) {
    return differs("entry", expected.entry, got.entry);
  }
  return std::move(entry->cubin);
}

absl::StatusOr<DecodedEntry> PeekCacheEntry(absl::string_view prefix) {
  absl::string_view payload;
  uint64_t payload_size = 0, checksum = 0;
  if (absl::Status s = ReadHeader(prefix, payload, payload_size, checksum);
      !s.ok()) {
    return s;
  }
  DecodedEntry out;
  if (absl::Status s = TakeStrings(payload, out); !s.ok()) return s;
  return out;
}

}  // namespace tessel::jit
