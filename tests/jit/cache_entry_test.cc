#include "jit/cache_entry.h"

#include <gmock/gmock.h>
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

EntryStamp Stamp() {
  return EntryStamp{.key = "0123456789abcdef0123456789abcdef",
                    .arch = "sm_90a",
                    .nvrtc_version = "13.0",
                    .tessel_version = "0.1.0",
                    .entry = "gemm<128>"};
}

std::string Encoded() { return EncodeCacheEntry(Stamp(), Sample()); }

TEST(CacheEntryTest, RoundTrips) {
  const std::string bytes = Encoded();
  EXPECT_EQ(bytes.substr(0, 8), "TSLCUBIN");
  EXPECT_EQ(bytes[8], 2);  // the format version
  absl::StatusOr<Cubin> back = DecodeCacheEntry(bytes, Stamp());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->image, Sample().image);
  EXPECT_EQ(back->lowered_entry, Sample().lowered_entry);
  EXPECT_EQ(back->arch, "sm_90a");
}

TEST(CacheEntryTest, EveryTruncationIsRejected) {
  const std::string bytes = Encoded();
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(DecodeCacheEntry(bytes.substr(0, size), Stamp()).ok()) << size;
  }
}

TEST(CacheEntryTest, EveryFlippedByteIsRejected) {
  const std::string bytes = Encoded();
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i >= 12 && i < 16) continue;  // reserved word
    std::string damaged = bytes;
    damaged[i] ^= 0x40;
    EXPECT_FALSE(DecodeCacheEntry(damaged, Stamp()).ok()) << i;
  }
}

TEST(CacheEntryTest, TrailingBytesAreRejected) {
  EXPECT_FALSE(DecodeCacheEntry(Encoded() + "x", Stamp()).ok());
}

// A sound entry of another key (or arch, NVRTC, tessel, entry) is not this
// key's entry, and says what it holds.
TEST(CacheEntryTest, AnotherStampIsRejected) {
  const std::string bytes = Encoded();
  for (std::string EntryStamp::*field :
       {&EntryStamp::key, &EntryStamp::arch, &EntryStamp::nvrtc_version,
        &EntryStamp::tessel_version, &EntryStamp::entry}) {
    EntryStamp expected = Stamp();
    expected.*field += "x";
    absl::StatusOr<Cubin> back = DecodeCacheEntry(bytes, expected);
    ASSERT_FALSE(back.ok());
    EXPECT_THAT(std::string(back.status().message()),
                ::testing::HasSubstr("holds another entry"));
  }
  absl::StatusOr<DecodedEntry> parsed = ParseCacheEntry(bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->stamp, Stamp());
}

// The format before stamps (version 1) is a clean miss.
TEST(CacheEntryTest, OlderFormatIsRejected) {
  std::string old = Encoded();
  old[8] = 1;
  absl::StatusOr<DecodedEntry> parsed = ParseCacheEntry(old);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()),
              ::testing::HasSubstr("format version 1"));
}

TEST(CacheEntryTest, PeekReadsTheStampFromAPrefix) {
  const std::string bytes = Encoded();
  absl::StatusOr<DecodedEntry> peek = PeekCacheEntry(bytes.substr(0, 140));
  ASSERT_TRUE(peek.ok()) << peek.status();
  EXPECT_EQ(peek->stamp, Stamp());
  EXPECT_EQ(peek->cubin.lowered_entry, Sample().lowered_entry);
  EXPECT_FALSE(PeekCacheEntry(bytes.substr(0, 40)).ok());
}

}  // namespace
}  // namespace tessel::jit
