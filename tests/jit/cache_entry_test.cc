#include "jit/cache_entry.h"

#include <gtest/gtest.h>

namespace tessel::jit {
namespace {

Cubin Sample() {
  return Cubin{.image = std::string("\x7f"
                                    "ELF\0\1\2 payload bytes",
                                    20),
               .lowered_entry = "_Z4gemmILi128EEvPf",
               .arch = "sm_90a"};
}

TEST(CacheEntryTest, RoundTrips) {
  const std::string bytes = EncodeCacheEntry(Sample());
  EXPECT_EQ(bytes.substr(0, 8), "TSLCUBIN");
  std::optional<Cubin> back = DecodeCacheEntry(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->image, Sample().image);
  EXPECT_EQ(back->lowered_entry, Sample().lowered_entry);
  EXPECT_EQ(back->arch, "sm_90a");
}

TEST(CacheEntryTest, EveryTruncationIsRejected) {
  const std::string bytes = EncodeCacheEntry(Sample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(DecodeCacheEntry(bytes.substr(0, size)).has_value()) << size;
  }
}

TEST(CacheEntryTest, EveryFlippedByteIsRejected) {
  const std::string bytes = EncodeCacheEntry(Sample());
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i >= 12 && i < 16) continue;  // reserved word
    std::string damaged = bytes;
    damaged[i] ^= 0x40;
    EXPECT_FALSE(DecodeCacheEntry(damaged).has_value()) << i;
  }
}

TEST(CacheEntryTest, TrailingBytesAreRejected) {
  EXPECT_FALSE(DecodeCacheEntry(EncodeCacheEntry(Sample()) + "x").has_value());
}

}  // namespace
}  // namespace tessel::jit
