#include "jit/cache_entry.h"

#include <xxhash.h>

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"
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

}  // namespace

std::string EncodeCacheEntry(const Cubin& cubin) {
  std::string payload;
  PutU32(payload, static_cast<uint32_t>(cubin.lowered_entry.size()));
  payload += cubin.lowered_entry;
  PutU32(payload, static_cast<uint32_t>(cubin.arch.size()));
  payload += cubin.arch;
  payload += cubin.image;
  std::string out(kMagic, sizeof(kMagic));
  PutU32(out, kCacheSchemaVersion);
  PutU32(out, 0);
  PutU64(out, payload.size());
  PutU64(out, XXH3_64bits(payload.data(), payload.size()));
  out += payload;
  return out;
}

std::optional<Cubin> DecodeCacheEntry(absl::string_view bytes) {
  if (bytes.size() < kCacheEntryHeaderSize ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0 ||
      GetLe(bytes, 8, 4) != kCacheSchemaVersion) {
    return std::nullopt;
  }
  const uint64_t payload_size = GetLe(bytes, 16, 8);
  const uint64_t checksum = GetLe(bytes, 24, 8);
  absl::string_view payload = bytes.substr(kCacheEntryHeaderSize);
  if (payload.size() != payload_size ||
      XXH3_64bits(payload.data(), payload.size()) != checksum) {
    return std::nullopt;
  }
  Cubin cubin;
  if (!TakeString(payload, cubin.lowered_entry) ||
      !TakeString(payload, cubin.arch) || payload.empty()) {
    return std::nullopt;
  }
  cubin.image = std::string(payload);
  return cubin;
}

}  // namespace tessel::jit
