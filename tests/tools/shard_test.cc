// --shard I/N: parsing, and a split that is a partition, stable and
// independent of the manifest's order.
#include "tools/shard.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;

ManifestEntry Entry(const std::string& name, nlohmann::json params,
                    int index = 0) {
  ManifestEntry entry;
  entry.index = index;
  entry.name = name;
  entry.params = std::move(params);
  return entry;
}

TEST(ShardTest, ParsesIOverN) {
  for (const auto& [text, index, count] :
       std::vector<std::tuple<std::string, int, int>>{
           {"1/1", 1, 1}, {"2/3", 2, 3}, {"3/3", 3, 3}, {"7/64", 7, 64}}) {
    absl::StatusOr<Shard> shard = ParseShard(text);
    ASSERT_TRUE(shard.ok()) << text << ": " << shard.status();
    EXPECT_EQ(shard->index, index);
    EXPECT_EQ(shard->count, count);
    EXPECT_EQ(shard->ToString(), text);
  }
}

TEST(ShardTest, RejectsBadValuesNamingThem) {
  for (const std::string text : {"",          "3",
                                 "/",         "0/3",
                                 "4/3",       "-1/3",
                                 "1/-3",      "1/0",
                                 "0/0",       "a/b",
                                 "1/",        "/3",
                                 "1/3/4",     "+1/3",
                                 " 1/3",      "1/3 ",
                                 "1.5/3",     "1/99999999999",
                                 "1/2000000", "99999999999999999999/3"}) {
    absl::StatusOr<Shard> shard = ParseShard(text);
    ASSERT_FALSE(shard.ok()) << "'" << text << "' was accepted";
    EXPECT_EQ(shard.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(shard.status().message(), HasSubstr("--shard " + text + ":"));
    EXPECT_THAT(shard.status().message(), HasSubstr("1 <= I <= N"));
  }
}

// Every job lands in exactly one shard of N, and the shards are near even.
TEST(ShardTest, SplitIsAPartition) {
  std::vector<ManifestEntry> entries;
  for (int m = 64; m <= 64 * 150; m += 64) {
    entries.push_back(Entry("gemm", {{"M", m}, {"N", 4096}}));
  }
  for (int count : {1, 2, 3, 7}) {
    std::map<int, int> per_shard;
    for (const ManifestEntry& entry : entries) {
      for (const char* arch : {"sm_80", "sm_90a"}) {
        int owners = 0;
        for (int index = 1; index <= count; ++index) {
          if (Shard{index, count}.Contains(entry, arch)) {
            ++owners;
            ++per_shard[index];
          }
        }
        EXPECT_EQ(owners, 1)
            << entry.Describe() << " " << arch << " of " << count;
      }
    }
    const int jobs = static_cast<int>(entries.size()) * 2;
    for (int index = 1; index <= count; ++index) {
      EXPECT_GT(per_shard[index], jobs / count / 2) << index << "/" << count;
      EXPECT_LT(per_shard[index], jobs / count * 3 / 2)
          << index << "/" << count;
    }
  }
}

// A job's shard depends on what it compiles, not on where it stands in the
// manifest or on the order its params were written in.
TEST(ShardTest, ShardIgnoresPositionAndKeyOrder) {
  const ManifestEntry first = Entry("gemm", {{"M", 128}, {"N", 256}}, 0);
  const ManifestEntry moved =
      Entry("gemm", nlohmann::json::parse(R"({"N": 256, "M": 128})"), 17);
  EXPECT_EQ(JobHash(first, "sm_90a"), JobHash(moved, "sm_90a"));
  // What the job compiles does change it.
  EXPECT_NE(JobHash(first, "sm_90a"), JobHash(first, "sm_80"));
  EXPECT_NE(JobHash(first, "sm_90a"),
            JobHash(Entry("gemm", {{"M", 128}, {"N", 512}}), "sm_90a"));
  ManifestEntry fast = first;
  fast.fast_math = true;
  EXPECT_NE(JobHash(first, "sm_90a"), JobHash(fast, "sm_90a"));
  ManifestEntry lines = first;
  lines.lineinfo = true;
  EXPECT_NE(JobHash(fast, "sm_90a"), JobHash(lines, "sm_90a"));
  // A pass config other than the default too; the default one keeps the
  // hash of an entry without it.
  ManifestEntry bulk = first;
  bulk.pass_config.bulk_reduce_atomics = true;
  EXPECT_NE(JobHash(first, "sm_90a"), JobHash(bulk, "sm_90a"));
  ManifestEntry pair = first;
  pair.pass_config.cluster_size = 2;
  EXPECT_NE(JobHash(bulk, "sm_90a"), JobHash(pair, "sm_90a"));
  ManifestEntry plain = first;
  plain.pass_config = PassConfig();
  EXPECT_EQ(JobHash(first, "sm_90a"), JobHash(plain, "sm_90a"));
}

// The same job must be in the same shard on every machine and with every
// later build: pinned values (XXH3-64 of the identity, no pointers, no
// process state). Changing them splits a running CI matrix differently.
TEST(ShardTest, HashIsPinned) {
  EXPECT_EQ(
      JobHash(Entry("seed_gemm", {{"M", 128}, {"N", 128}, {"K", 64}}), "sm_80"),
      uint64_t{2517418879903505445u});
}

}  // namespace
}  // namespace tessel::tools
