// The disk cache's hit / miss record (cache_usage.h): exact under several
// processes at once, reset by clear, and counted by the kernel cache.
#include "jit/cache_usage.h"

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "gtest/gtest.h"
#include "jit/cache_directory.h"
#include "jit/kernel_cache.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

TEST(CacheUsageTest, ProcessesAtOnceLoseNoCount) {
  testing::TempDir tmp;
  constexpr int kProcesses = 4, kHits = 40, kMisses = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < kHits + kMisses; ++i)
        RecordCacheUsage(tmp.path(), i < kHits);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CacheUsage u = ReadCacheUsage(tmp.path());
  EXPECT_EQ(u.hits, uint64_t{kProcesses * kHits});
  EXPECT_EQ(u.misses, uint64_t{kProcesses * kMisses});
}

// A record of an older tessel ("3 1\n", shorter than today's fixed width)
// counts on; an unreadable one starts over and is cut to one record.
TEST(CacheUsageTest, ShortRecordCountsOnAndJunkStartsOver) {
  testing::TempDir tmp;
  const std::string path = CacheUsagePath(tmp.path());
  testing::WriteFile(path, "3 1\n");
  RecordCacheUsage(tmp.path(), /*hit=*/true);
  CacheUsage u = ReadCacheUsage(tmp.path());
  EXPECT_EQ(u.hits, 4u);
  EXPECT_EQ(u.misses, 1u);
  testing::WriteFile(path, std::string(100, 'x'));
  RecordCacheUsage(tmp.path(), /*hit=*/false);
  u = ReadCacheUsage(tmp.path());
  EXPECT_EQ(u.hits, 0u);
  EXPECT_EQ(u.misses, 1u);
}

TEST(CacheUsageTest, KernelCacheCountsDiskHitsAndMissesAndClearResets) {
  testing::TempDir tmp;
  const CompileOptions sm80{.arch = "sm_80"};
  {
    KernelCache cache({.disk = {.dir = tmp.path()}});
    ASSERT_TRUE(cache.GetCubin(testing::SaxpySource(), sm80).ok());  // miss
    ASSERT_TRUE(cache.GetCubin(testing::SaxpySource(), sm80).ok());  // memory
  }
  KernelCache fresh({.disk = {.dir = tmp.path()}});
  ASSERT_TRUE(fresh.GetCubin(testing::SaxpySource(), sm80).ok());  // disk hit
  const CacheDirectory dir(tmp.path());
  CacheUsage u = ReadCacheUsage(dir.version_dir());
  EXPECT_EQ(u.hits, 1u);
  EXPECT_EQ(u.misses, 1u);
  ASSERT_TRUE(dir.Clear().ok());
  u = ReadCacheUsage(dir.version_dir());
  EXPECT_EQ(u.hits + u.misses, 0u);
}

}  // namespace
}  // namespace tessel::jit
