// Every folder and file the cache reads must be the user's own and written
// by no one else: otherwise it is not read, with a warning that names it and
// the fix; a refused root is left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "jit/cache_directory.h"
#include "jit/kernel_cache.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using testing::FilesUnder;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::TempDir;

namespace fs = std::filesystem;

const CompileOptions kSm90{.arch = "sm_90a"};

KernelCacheOptions InDir(const std::string& dir) {
  return KernelCacheOptions{.disk = {.dir = dir}};
}

class CacheTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<CachedCubin> warm =
        KernelCache(InDir(tmp_.path())).GetCubin(source_, kSm90);
    ASSERT_TRUE(warm.ok()) << warm.status();
    key_ = warm->key;
    cubin_ = CacheDirectory(tmp_.path()).EntryPath(key_, ".cubin");
    shard_ = fs::path(cubin_).parent_path().string();
  }

  // A fresh cache's answer, and what it printed.
  CubinOrigin LoadAgain(std::string* warning) {
    ::testing::internal::CaptureStderr();
    absl::StatusOr<CachedCubin> got =
        KernelCache(InDir(tmp_.path())).GetCubin(source_, kSm90);
    *warning = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->origin : CubinOrigin::kMemory;
  }

  TempDir tmp_;
  const CudaSource source_ = testing::SaxpySource("trust");
  std::string key_, cubin_, shard_;
};

TEST_F(CacheTrustTest, SoundEntryIsAHit) {
  std::string warning;
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kDisk);
  EXPECT_THAT(warning, IsEmpty());
}

TEST_F(CacheTrustTest, ShardWritableByOthersIsNotRead) {
  ASSERT_EQ(chmod(shard_.c_str(), 0777), 0);
  std::string warning;
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kCompiled);
  EXPECT_THAT(warning, HasSubstr(shard_));
  EXPECT_THAT(warning, HasSubstr("writable by group or others"));
  EXPECT_THAT(warning, HasSubstr("chmod 700 " + shard_));
}

TEST_F(CacheTrustTest, EntryWritableByOthersIsNotRead) {
  ASSERT_EQ(chmod(cubin_.c_str(), 0666), 0);
  std::string warning;
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kCompiled);
  EXPECT_THAT(warning, HasSubstr(cubin_));
  EXPECT_THAT(warning, HasSubstr("writable by group or others"));
  EXPECT_THAT(warning, HasSubstr("rm " + cubin_));
  // The rebuilt entry replaced it: the user's own, mode 0600.
  struct stat st;
  ASSERT_EQ(stat(cubin_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kDisk);
}

TEST_F(CacheTrustTest, EntryOfAnotherUserIsNotRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  ASSERT_EQ(chown(cubin_.c_str(), 65534, 65534), 0);
  std::string warning;
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kCompiled);
  EXPECT_THAT(warning, HasSubstr(cubin_));
  EXPECT_THAT(warning, HasSubstr("owned by uid 65534"));
}

TEST_F(CacheTrustTest, SymlinkedEntryIsNotRead) {
  const std::string elsewhere = tmp_ / "elsewhere.cubin";
  fs::rename(cubin_, elsewhere);
  fs::create_symlink(elsewhere, cubin_);
  std::string warning;
  EXPECT_EQ(LoadAgain(&warning), CubinOrigin::kCompiled);
  EXPECT_THAT(warning, HasSubstr(cubin_));
}

TEST(CacheRootTest, RefusedRootIsLeftUntouched) {
  TempDir tmp;
  const std::string root = tmp / "shared";
  ASSERT_EQ(mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(chmod(root.c_str(), 0777), 0);
  ::testing::internal::CaptureStderr();
  KernelCache cache(InDir(root));
  absl::StatusOr<CachedCubin> got =
      cache.GetCubin(testing::SaxpySource("refused"), kSm90);
  const std::string warning = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(cache.disk().enabled());
  EXPECT_THAT(warning, HasSubstr(root));
  EXPECT_THAT(warning, HasSubstr("chmod 700 " + root));
  EXPECT_THAT(FilesUnder(root), IsEmpty());
  EXPECT_TRUE(fs::is_empty(root)) << "no version folder inside a refused root";
}

}  // namespace
}  // namespace tessel::jit
