#include "jit/kernel_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/cache_directory.h"
#include "jit/counters.h"
#include "jit/driver_api.h"
#include "nlohmann/json.hpp"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using testing::FilesUnder;
using ::testing::HasSubstr;
using testing::SaxpySource;
using testing::TempDir;

const CompileOptions kSm90{.arch = "sm_90a"};

KernelCacheOptions InDir(const std::string& dir) {
  return KernelCacheOptions{.disk = {.dir = dir}};
}

TEST(KernelCacheTest, MissThenDiskHitThenMemoryHit) {
  TempDir tmp;
  const CudaSource source = SaxpySource("miss-then-hit");
  const JitCounters start = GetJitCounters();
  std::string image;
  {
    KernelCache cache(InDir(tmp.path()));
    absl::StatusOr<CachedCubin> first = cache.GetCubin(source, kSm90);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->origin, CubinOrigin::kCompiled);
    image = first->cubin->image;
    absl::StatusOr<CachedCubin> again = cache.GetCubin(source, kSm90);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->origin, CubinOrigin::kMemory);
    EXPECT_EQ(again->cubin, first->cubin);  // shared, not copied
  }
  KernelCache fresh(InDir(tmp.path()));  // as a new process would
  absl::StatusOr<CachedCubin> from_disk = fresh.GetCubin(source, kSm90);
  ASSERT_TRUE(from_disk.ok());
  EXPECT_EQ(from_disk->origin, CubinOrigin::kDisk);
  EXPECT_EQ(from_disk->cubin->image, image);
  EXPECT_EQ(from_disk->cubin->lowered_entry, "saxpy");

  const JitCounters end = GetJitCounters();
  EXPECT_EQ(end.nvrtc_compiles - start.nvrtc_compiles, 1u);
  EXPECT_EQ(end.misses - start.misses, 1u);
  EXPECT_EQ(end.memory_hits - start.memory_hits, 1u);
  EXPECT_EQ(end.disk_hits - start.disk_hits, 1u);

  // The entry's metadata and source sit beside it.
  CacheDirectory dir(tmp.path());
  const std::string key = from_disk->key;
  EXPECT_EQ(testing::ReadFile(dir.EntryPath(key, ".cu")), source.text);
  nlohmann::json meta =
      nlohmann::json::parse(testing::ReadFile(dir.EntryPath(key, ".json")));
  EXPECT_EQ(meta["entry"], "saxpy");
  EXPECT_EQ(meta["lowered_entry"], "saxpy");
  EXPECT_EQ(meta["arch"], "sm_90a");
  EXPECT_EQ(meta["nvrtc_version"], NvrtcVersion());
  EXPECT_EQ(meta["options"][0], "-arch=sm_90a");
  EXPECT_GT(meta["compile_ms"].get<double>(), 0);
  EXPECT_GT(meta["created_unix"].get<int64_t>(), 1700000000);
}

TEST(KernelCacheTest, CubinsPastTheMemoryBudgetComeBackFromDisk) {
  TempDir tmp;
  KernelCacheOptions options = InDir(tmp.path());
  options.memory_budget_bytes = 1;  // room for the newest cubin only
  KernelCache cache(options);
  const CudaSource first = SaxpySource("budget-first");
  const CudaSource second = SaxpySource("budget-second");
  ASSERT_TRUE(cache.GetCubin(first, kSm90).ok());
  ASSERT_TRUE(cache.GetCubin(second, kSm90).ok());
  absl::StatusOr<CachedCubin> again = cache.GetCubin(second, kSm90);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->origin, CubinOrigin::kMemory);
  absl::StatusOr<CachedCubin> evicted = cache.GetCubin(first, kSm90);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(evicted->origin, CubinOrigin::kDisk);
}

TEST(KernelCacheTest, DamagedEntriesAreRebuilt) {
  TempDir tmp;
  const CudaSource source = SaxpySource("damaged");
  absl::StatusOr<CachedCubin> first =
      KernelCache(InDir(tmp.path())).GetCubin(source, kSm90);
  ASSERT_TRUE(first.ok());
  const std::string path =
      CacheDirectory(tmp.path()).EntryPath(first->key, ".cubin");
  const std::string good = testing::ReadFile(path);

  const auto truncate = [](std::string bytes) {
    return bytes.substr(0, bytes.size() - 100);
  };
  const auto flip = [](std::string bytes) {
    bytes[bytes.size() / 2] ^= 1;
    return bytes;
  };
  for (const auto& damage : {+truncate, +flip}) {
    testing::WriteFile(path, damage(good));
    const JitCounters before = GetJitCounters();
    absl::StatusOr<CachedCubin> rebuilt =
        KernelCache(InDir(tmp.path())).GetCubin(source, kSm90);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
    EXPECT_EQ(rebuilt->origin, CubinOrigin::kCompiled);
    EXPECT_EQ(rebuilt->cubin->image, first->cubin->image);
    EXPECT_EQ(GetJitCounters().corrupt_entries, before.corrupt_entries + 1);
    EXPECT_EQ(GetJitCounters().nvrtc_compiles, before.nvrtc_compiles + 1);
    EXPECT_EQ(testing::ReadFile(path), good);  // whole again
  }
}

TEST(KernelCacheTest, UnusableFolderStillCompiles) {
  TempDir tmp;
  testing::WriteFile(tmp / "blocker", "");
  KernelCache cache(InDir(tmp / "blocker/cache"));
  EXPECT_FALSE(cache.disk().enabled());
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(SaxpySource("uncached"), kSm90);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->origin, CubinOrigin::kCompiled);
}

TEST(KernelCacheTest, ReadOnlyFolderStillCompiles) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root ignores permissions (UnusableFolderStillCompiles "
                    "covers the failure with a file in the way)";
  }
  TempDir tmp;
  const std::string root = tmp / "ro";
  ASSERT_EQ(mkdir(root.c_str(), 0500), 0);
  KernelCache cache(InDir(root));
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(SaxpySource("read-only"), kSm90);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->origin, CubinOrigin::kCompiled);
}

TEST(KernelCacheTest, CompileErrorsAreReturnedAndNotCached) {
  TempDir tmp;
  KernelCache cache(InDir(tmp.path()));
  CudaSource bad{.text = "extern \"C\" __global__ void k() { nope; }\n",
                 .entry = "k"};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<CachedCubin> cubin = cache.GetCubin(bad, kSm90);
    ASSERT_FALSE(cubin.ok());
    EXPECT_THAT(cubin.status().message(), HasSubstr("k.cu:1 |"));
  }
  EXPECT_THAT(FilesUnder(tmp.path()), ::testing::IsEmpty());
}

TEST(KernelCacheTest, ThreadsAskingForOneKernelShareOneCompile) {
  TempDir tmp;
  KernelCache cache(InDir(tmp.path()));
  const CudaSource source = SaxpySource("threads");
  constexpr int kThreads = 8;
  std::vector<absl::StatusOr<CachedCubin>> results(kThreads);
  const JitCounters before = GetJitCounters();
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = cache.GetCubin(source, kSm90); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->cubin, results[0]->cubin);
  }
  const JitCounters after = GetJitCounters();
  EXPECT_EQ(after.nvrtc_compiles - before.nvrtc_compiles, 1u);
  EXPECT_EQ(after.memory_hits - before.memory_hits, kThreads - 1u);
}

// 8 processes x 5 rounds on one cache, each asking for 3 kernels in its own
// order: the first round compiles each key once; before each later round
// one entry is removed, and that key alone is compiled again, once. Then
// verify finds every entry sound and nothing half-written is left.
TEST(KernelCacheTest, ForkedProcessesRacingOverRoundsCompileEachKeyOnce) {
  TempDir tmp;
  const std::string cache_dir = tmp / "cache";
  constexpr int kProcesses = 8, kRounds = 5, kKeys = 3;
  std::vector<CudaSource> sources;
  for (int k = 0; k < kKeys; ++k) {
    sources.push_back(SaxpySource(absl::StrCat("processes-", k)));
  }
  std::vector<std::string> keys(kKeys);
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      ASSERT_TRUE(CacheDirectory(cache_dir).Remove(keys[round % kKeys]).ok());
    }
    int start[2];
    ASSERT_EQ(pipe(start), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(start[1]);
        char byte;
        (void)!read(start[0], &byte, 1);  // all start together (EOF)
        KernelCache cache(InDir(cache_dir));
        const uint64_t compiles = GetJitCounters().nvrtc_compiles;
        for (int j = 0; j < kKeys; ++j) {
          const int k = (i + j) % kKeys;
          absl::StatusOr<CachedCubin> cubin = cache.GetCubin(sources[k], kSm90);
          if (!cubin.ok()) _exit(10);
          testing::WriteFile(tmp / absl::StrCat("out", round, "_", i, "_", k),
                             cubin->key + cubin->cubin->image);
        }
        _exit(static_cast<int>(GetJitCounters().nvrtc_compiles - compiles));
      }
      children.push_back(pid);
    }
    close(start[0]);
    close(start[1]);  // go
    int compiles = 0;
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      ASSERT_TRUE(WIFEXITED(status));
      ASSERT_LT(WEXITSTATUS(status), 10) << "a child failed to get the cubin";
      compiles += WEXITSTATUS(status);
    }
    EXPECT_EQ(compiles, round == 0 ? kKeys : 1) << "round " << round;
    for (int k = 0; k < kKeys; ++k) {
      const std::string first =
          testing::ReadFile(tmp / absl::StrCat("out", round, "_0_", k));
      ASSERT_GT(first.size(), 32u);
      if (round == 0) keys[k] = first.substr(0, 32);
      EXPECT_EQ(first.substr(0, 32), keys[k]);
      for (int i = 1; i < kProcesses; ++i) {
        EXPECT_EQ(
            testing::ReadFile(tmp / absl::StrCat("out", round, "_", i, "_", k)),
            first);
      }
    }
  }
  absl::StatusOr<CacheVerifyReport> verify = CacheDirectory(cache_dir).Verify();
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_EQ(verify->good, kKeys);
  EXPECT_THAT(verify->removed, ::testing::IsEmpty());
  for (const std::string& name : FilesUnder(cache_dir)) {
    EXPECT_FALSE(absl::StrContains(name, ".tmp.")) << name;
    EXPECT_FALSE(absl::EndsWith(name, ".lock")) << name;
  }
  // .cubin, .json, .cu per key, and the hit / miss record (cache_usage.h).
  EXPECT_EQ(FilesUnder(cache_dir).size(), 3u * kKeys + 1);
}

TEST(KernelCacheTest, IsolatedModeCompilesAndCaches) {
  TempDir tmp;
  KernelCacheOptions options = InDir(tmp.path());
  options.isolated = true;
  KernelCache cache(options);
  const JitCounters before = GetJitCounters();
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(SaxpySource("isolated"), kSm90);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->origin, CubinOrigin::kCompiled);
  EXPECT_EQ(cubin->cubin->lowered_entry, "saxpy");
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, before.nvrtc_compiles + 1);
  EXPECT_EQ(KernelCache(InDir(tmp.path()))
                .GetCubin(SaxpySource("isolated"), kSm90)
                ->origin,
            CubinOrigin::kDisk);
}

TEST(KernelCacheTest, LoadWithoutDriverIsUnavailable) {
  if (Driver().ok()) GTEST_SKIP() << "a CUDA driver is present";
  TempDir tmp;
  KernelCache cache(InDir(tmp.path()));
  absl::StatusOr<LoadedKernel> kernel =
      cache.GetKernel(SaxpySource(), kSm90, {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessel::jit
