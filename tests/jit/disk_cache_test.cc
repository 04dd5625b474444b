#include "jit/disk_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "jit/cache_directory.h"
#include "jit/cache_entry.h"
#include "jit/counters.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using testing::FilesUnder;
using ::testing::HasSubstr;
using testing::TempDir;

Cubin FakeCubin(const std::string& tag, size_t size = 1000) {
  return Cubin{.image = std::string(size, tag[0]),
               .lowered_entry = "k_" + tag,
               .arch = "sm_90a"};
}

// The stamp a cache compiling FakeCubin(...) for `key` gives its entry.
EntryStamp StampOf(const std::string& key, const std::string& entry = "k") {
  return MakeEntryStamp(key, "sm_90a", entry);
}

std::string Key(int i) {
  std::string key = "0123456789abcdef0123456789abcdef";
  key[0] = "0123456789abcdef"[i % 16];
  key[31] = "0123456789abcdef"[i / 16 % 16];
  return key;
}

using testing::ScopedEnv;

TEST(DiskCacheOptionsTest, FollowsTheEnvironment) {
  ScopedEnv dir("TESSEL_CACHE_DIR", "/some/where");
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  ScopedEnv home("HOME", "/home/u");
  ScopedEnv mode("TESSEL_CACHE", nullptr);
  ScopedEnv max("TESSEL_CACHE_MAX_BYTES", "3M");
  DiskCacheOptions options = DiskCacheOptions::FromEnv();
  EXPECT_TRUE(options.enabled);
  EXPECT_EQ(options.dir, "/some/where");
  EXPECT_EQ(options.max_bytes, 3u << 20);
  {
    ScopedEnv no_dir("TESSEL_CACHE_DIR", nullptr);
    EXPECT_EQ(DiskCacheOptions::FromEnv().dir, "/xdg/tessel");
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(DiskCacheOptions::FromEnv().dir, "/home/u/.cache/tessel");
  }
  {
    ScopedEnv typo("TESSEL_CACHE", "of");
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(DiskCacheOptions::FromEnv().enabled);
    EXPECT_THAT(::testing::internal::GetCapturedStderr(),
                HasSubstr("TESSEL_CACHE=of is neither on nor off"));
    ScopedEnv on("TESSEL_CACHE", "ON");
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(DiskCacheOptions::FromEnv().enabled);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  }
  ScopedEnv off("TESSEL_CACHE", "off");
  EXPECT_FALSE(DiskCacheOptions::FromEnv().enabled);
  ScopedEnv plain("TESSEL_CACHE_MAX_BYTES", "12345");
  EXPECT_EQ(DiskCacheOptions::FromEnv().max_bytes, 12345u);
  ScopedEnv bad("TESSEL_CACHE_MAX_BYTES", "lots");
  EXPECT_EQ(DiskCacheOptions::FromEnv().max_bytes, uint64_t{1} << 30);
}

TEST(DiskCacheTest, StoresTheLayoutAndLoadsIt) {
  TempDir tmp;
  const std::string root = tmp / "cache";
  DiskCache cache({.dir = root});
  ASSERT_TRUE(cache.enabled()) << cache.disabled_reason();
  struct stat st;
  ASSERT_EQ(stat(root.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  const std::string key = Key(1);
  EXPECT_FALSE(cache.Load(StampOf(key, "k_a")).has_value());
  const CudaSource source{.text = "// source\n", .entry = "k_a"};
  EXPECT_TRUE(cache.Store(key, FakeCubin("a"), source, {"-arch=sm_90a"}).ok());
  const std::string base = root + "/v2/" + key.substr(0, 2) + "/" + key;
  EXPECT_EQ(testing::ReadFile(base + ".cu"), "// source\n");
  EXPECT_TRUE(
      DecodeCacheEntry(testing::ReadFile(base + ".cubin"), StampOf(key, "k_a"))
          .ok());
  EXPECT_THAT(testing::ReadFile(base + ".json"),
              HasSubstr("\"entry\": \"k_a\""));

  std::optional<Cubin> hit = cache.Load(StampOf(key, "k_a"));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->image, FakeCubin("a").image);
  EXPECT_EQ(hit->lowered_entry, "k_a");
}

TEST(DiskCacheTest, DamagedEntryIsAMissAndRemoved) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  const std::string key = Key(2);
  EXPECT_TRUE(
      cache.Store(key, FakeCubin("b"), {.text = "x", .entry = "k"}, {}).ok());
  const std::string path = cache.directory().EntryPath(key, ".cubin");
  const std::string bytes = testing::ReadFile(path);
  const uint64_t corrupt = GetJitCounters().corrupt_entries;
  testing::WriteFile(path, bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(cache.Load(StampOf(key)).has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(GetJitCounters().corrupt_entries, corrupt + 1);
}

// A huge (sparse) file in an entry's place is a miss, not an allocation of
// its size: reading it whole would end the process.
TEST(DiskCacheTest, HugeEntryIsAMissAndRemoved) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  const std::string key = Key(5);
  EXPECT_TRUE(
      cache.Store(key, FakeCubin("h"), {.text = "x", .entry = "k"}, {}).ok());
  const std::string path = cache.directory().EntryPath(key, ".cubin");
  std::filesystem::resize_file(path, uintmax_t{100} << 30);
  EXPECT_FALSE(cache.Load(StampOf(key)).has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DiskCacheTest, OffWritesNothing) {
  TempDir tmp;
  DiskCache cache({.enabled = false, .dir = tmp / "cache"});
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(
      cache.Store(Key(3), FakeCubin("c"), {.text = "x", .entry = "k"}, {})
          .ok());
  EXPECT_FALSE(cache.Load(StampOf(Key(3))).has_value());
  EXPECT_FALSE(std::filesystem::exists(tmp / "cache"));
}

TEST(DiskCacheTest, FileInPlaceOfFolderDisablesWithAWarning) {
  TempDir tmp;
  testing::WriteFile(tmp / "file", "not a folder");
  DiskCache cache({.dir = tmp / "file/cache"});
  EXPECT_FALSE(cache.enabled());
  EXPECT_THAT(cache.disabled_reason(), HasSubstr("file"));
  EXPECT_FALSE(
      cache.Store(Key(4), FakeCubin("d"), {.text = "x", .entry = "k"}, {})
          .ok());
  EXPECT_FALSE(cache.Load(StampOf(Key(4))).has_value());
}

TEST(DiskCacheTest, GroupWritableFolderIsNotTrusted) {
  TempDir tmp;
  const std::string root = tmp / "cache";
  ASSERT_EQ(mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(chmod(root.c_str(), 0770), 0);
  DiskCache cache({.dir = root});
  EXPECT_FALSE(cache.enabled());
  EXPECT_THAT(cache.disabled_reason(), HasSubstr("writable by group"));
}

TEST(DiskCacheTest, FolderOfAnotherUserIsNotTrusted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  TempDir tmp;
  const std::string root = tmp / "cache";
  ASSERT_EQ(mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(chown(root.c_str(), 65534, 65534), 0);
  DiskCache cache({.dir = root});
  EXPECT_FALSE(cache.enabled());
  EXPECT_THAT(cache.disabled_reason(), HasSubstr("owned by uid 65534"));
}

TEST(DiskCacheTest, UnwritableShardStillLeavesLoadsWorking) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  ASSERT_TRUE(cache.enabled());
  // A file where the key's shard folder should be: stores fail (warned
  // once), loads find nothing.
  const std::string key = Key(5);
  testing::WriteFile(tmp / ("v2/" + key.substr(0, 2)), "blocker");
  EXPECT_FALSE(
      cache.Store(key, FakeCubin("e"), {.text = "x", .entry = "k"}, {}).ok());
  EXPECT_FALSE(cache.Load(StampOf(key)).has_value());
  EXPECT_EQ(cache.LockKey(key), nullptr);
}

TEST(DiskCacheTest, EvictionKeepsTheBoundAndTheRecentlyUsed) {
  TempDir tmp;
  // Each entry is ~10 KB of cubin plus small .json/.cu files.
  DiskCache cache({.dir = tmp.path(), .max_bytes = 35000});
  const CudaSource source{.text = "x", .entry = "k"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(cache
                    .Store(Key(i), FakeCubin("abc" + std::to_string(i), 10000),
                           source, {})
                    .ok());
    usleep(20000);  // distinct mtimes
  }
  ASSERT_TRUE(
      cache.Load(StampOf(Key(0))).has_value());  // touch: now most recent
  usleep(20000);
  EXPECT_TRUE(cache.Store(Key(3), FakeCubin("z", 10000), source, {}).ok());
  EXPECT_LE(*cache.directory().TotalBytes(), 35000u);
  EXPECT_TRUE(cache.Load(StampOf(Key(0))).has_value());
  EXPECT_FALSE(cache.Load(StampOf(Key(1))).has_value());  // least recently used
  EXPECT_TRUE(cache.Load(StampOf(Key(3))).has_value());
}

TEST(DiskCacheTest, KeyLockExcludesAndLeavesNoFile) {
  TempDir tmp;
  DiskCache a({.dir = tmp.path(), .lock_timeout = absl::Milliseconds(50)});
  DiskCache b({.dir = tmp.path(), .lock_timeout = absl::Milliseconds(50)});
  {
    std::unique_ptr<DiskCache::KeyLock> held = a.LockKey(Key(6));
    ASSERT_NE(held, nullptr);
    EXPECT_EQ(b.LockKey(Key(6)), nullptr);  // times out
    EXPECT_NE(b.LockKey(Key(7)), nullptr);  // another key is free
  }
  EXPECT_NE(b.LockKey(Key(6)), nullptr);
  EXPECT_THAT(FilesUnder(tmp.path()), ::testing::IsEmpty());
}

TEST(CacheDirectoryTest, ListsVerifiesRemovesAndClears) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(cache
                    .Store(Key(i), FakeCubin("q"), {.text = "x", .entry = "k"},
                           {"-arch=sm_90a"})
                    .ok());
  }
  CacheDirectory dir(tmp.path());
  absl::StatusOr<std::vector<CacheEntryInfo>> entries = dir.List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].entry, "k");
  EXPECT_EQ((*entries)[0].arch, "sm_90a");
  uint64_t sum = 0;
  for (const CacheEntryInfo& entry : *entries) sum += entry.bytes;
  EXPECT_EQ(*dir.TotalBytes(), sum);

  testing::WriteFile(dir.EntryPath(Key(1), ".cubin"), "garbage");
  absl::StatusOr<CacheVerifyReport> report = dir.Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->good, 2);
  EXPECT_THAT(report->removed, ::testing::ElementsAre(Key(1)));
  EXPECT_EQ(dir.List()->size(), 2u);

  ASSERT_TRUE(dir.Remove(Key(0)).ok());
  EXPECT_EQ(dir.List()->size(), 1u);
  ASSERT_TRUE(dir.Clear().ok());
  EXPECT_EQ(*dir.TotalBytes(), 0u);
}

// A set but empty TESSEL_CACHE_DIR is a mistake (an unset shell variable):
// the disk cache is off, saying why, rather than quietly using the default.
TEST(DiskCacheOptionsTest, EmptyCacheDirSwitchesTheDiskCacheOffLoudly) {
  TempDir tmp;
  ScopedEnv dir("TESSEL_CACHE_DIR", "");
  ScopedEnv xdg("XDG_CACHE_HOME", (tmp / "xdg").c_str());
  ScopedEnv mode("TESSEL_CACHE", nullptr);
  ::testing::internal::CaptureStderr();
  DiskCache cache(DiskCacheOptions::FromEnv());
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.enabled());
  EXPECT_THAT(cache.disabled_reason(), HasSubstr("TESSEL_CACHE_DIR"));
  EXPECT_THAT(warning, HasSubstr("TESSEL_CACHE_DIR is set but empty"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "xdg"));
}

// A full disk can leave a key's .cu (or .json) without its .cubin: verify
// reports and removes it.
TEST(CacheDirectoryTest, VerifyRemovesOrphanSources) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  EXPECT_TRUE(
      cache.Store(Key(1), FakeCubin("q"), {.text = "x", .entry = "k"}, {})
          .ok());
  const std::string orphan = cache.directory().EntryPath(Key(2), ".cu");
  std::filesystem::create_directories(
      std::filesystem::path(orphan).parent_path());
  testing::WriteFile(orphan, "// the .json and .cubin did not fit");
  absl::StatusOr<CacheVerifyReport> report = cache.directory().Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->good, 1);
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_THAT(report->orphans, ::testing::ElementsAre(Key(2)));
  EXPECT_FALSE(report->clean());
  EXPECT_TRUE(cache.directory().Verify()->clean());
}

// Temp files of writes that died (a killed warmup) were only ever removed by
// a prune an hour later: verify removes those whose process is gone, after
// a minute's grace, and any over 10 minutes old.
TEST(CacheDirectoryTest, VerifyRemovesTempFilesOfDeadWriters) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  const std::string cubin = cache.directory().EntryPath(Key(1), ".cubin");
  const std::filesystem::path shard =
      std::filesystem::path(cubin).parent_path();
  std::filesystem::create_directories(shard);
  const auto now = std::filesystem::file_time_type::clock::now();
  auto temp = [&](const std::string& pid, std::chrono::minutes age) {
    const std::filesystem::path path =
        shard / ("." + Key(1) + ".cubin.tmp." + pid + ".0");
    testing::WriteFile(path.string(), "partial");
    std::filesystem::last_write_time(path, now - age);
    return path;
  };
  // pid_max is at most 2^22: 2^30 is no process's.
  const auto dead = temp("1073741824", std::chrono::minutes(2));
  const auto dead_fresh = temp("1073741825", std::chrono::minutes(0));
  const auto alive = temp(std::to_string(getpid()), std::chrono::minutes(2));
  const auto old =
      temp(std::to_string(getpid() + 1) + "x", std::chrono::minutes(11));
  absl::StatusOr<CacheVerifyReport> report = cache.directory().Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->stale_temps, 2);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(dead_fresh));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_FALSE(std::filesystem::exists(old));
  EXPECT_TRUE(report->clean());
}

// An orphan whose writer still holds the key's lock is being written: left.
TEST(CacheDirectoryTest, VerifyLeavesASourceWhoseWriterHoldsTheLock) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  std::unique_ptr<DiskCache::KeyLock> lock = cache.LockKey(Key(3));
  ASSERT_NE(lock, nullptr);
  const std::string source = cache.directory().EntryPath(Key(3), ".cu");
  testing::WriteFile(source, "// being written");
  absl::StatusOr<CacheVerifyReport> report = cache.directory().Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->orphans.empty());
  EXPECT_TRUE(std::filesystem::exists(source));
}

// The size limit's own eviction is recorded; a prune from outside is not.
TEST(CacheDirectoryTest, OnlyTheSizeLimitRecordsItsEvictions) {
  TempDir tmp;
  DiskCache cache({.dir = tmp.path()});
  EXPECT_TRUE(
      cache.Store(Key(1), FakeCubin("q"), {.text = "x", .entry = "k"}, {})
          .ok());
  const CacheDirectory& dir = cache.directory();
  EXPECT_EQ(dir.LastSizeLimitEviction(), absl::InfinitePast());
  ASSERT_TRUE(dir.Prune(0).ok());
  EXPECT_EQ(dir.LastSizeLimitEviction(), absl::InfinitePast());
  EXPECT_TRUE(
      cache.Store(Key(1), FakeCubin("q"), {.text = "x", .entry = "k"}, {})
          .ok());
  const absl::Time before = absl::Now();
  ASSERT_TRUE(dir.EvictForSizeLimit(0).ok());
  EXPECT_GE(dir.LastSizeLimitEviction(), before);
  EXPECT_TRUE(dir.List()->empty());
}

}  // namespace
}  // namespace tessel::jit
