// RunWarmup in this process (its jobs are forked children): outcomes, the
// second run, crash and timeout isolation, corrupt entries, dry runs.
#include "tools/warmup_driver.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cache_directory.h"
#include "jit/cache_key.h"
#include "tests/tools/test_util.h"
#include "tools/lowering.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::LeftoversUnder;
using testing::ReadFile;
using testing::SourcePath;
using testing::TempDir;
using testing::WriteFile;

class WarmupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Manifest> m =
        LoadManifest(SourcePath("tests/tools/testdata/small.json"));
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = *std::move(m);
    absl::StatusOr<ManifestPrograms> p = BuildManifestPrograms(
        manifest_, KernelRegistry::Global(), {"sm_80", "sm_90a"});
    ASSERT_TRUE(p.ok()) << p.status();
    programs_ = *std::move(p);
    options_.archs = {"sm_80"};
    options_.jobs = 2;
    options_.cache_dir = cache_.path();
  }

  WarmupReport Warm(const WarmupOptions& options) {
    absl::StatusOr<WarmupReport> report =
        RunWarmup(manifest_, programs_, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : WarmupReport{};
  }

  // The key the codegen gives job i of the small manifest on `arch`.
  std::string KeyOf(int i, const std::string& arch) {
    absl::StatusOr<LoweredKernel> lowered =
        LowerWithCodegen(programs_[i].at(arch), {.arch = arch});
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<std::string> key =
        jit::ComputeCacheKey(lowered->source, lowered->options);
    EXPECT_TRUE(key.ok());
    return *key;
  }

  TempDir cache_;
  Manifest manifest_;
  ManifestPrograms programs_;
  WarmupOptions options_;
};

TEST_F(WarmupTest, SecondRunFindsEverythingCached) {
  WarmupReport first = Warm(options_);
  EXPECT_EQ(first.Count(JobOutcome::kCompiled), 3) << FormatSummary(first);
  EXPECT_TRUE(first.ok());
  const jit::CacheDirectory dir(cache_.path());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(first.results[i].key, KeyOf(i, "sm_80"));
    EXPECT_FALSE(ReadFile(dir.EntryPath(KeyOf(i, "sm_80"), ".cubin")).empty());
  }
  WarmupReport second = Warm(options_);
  EXPECT_EQ(second.Count(JobOutcome::kCached), 3) << FormatSummary(second);
  EXPECT_EQ(second.Count(JobOutcome::kCompiled), 0);
  EXPECT_THAT(FormatSummary(second),
              HasSubstr("0 compiled, 3 already cached, 0 failed"));
  EXPECT_THAT(LeftoversUnder(cache_.path()), IsEmpty());
}

TEST_F(WarmupTest, EveryArchIsItsOwnEntryAndEntriesCanLimitArchs) {
  manifest_.kernels[0].archs = {"sm_90a"};  // Hopper only
  options_.archs = {"sm_90a", "sm_80"};
  WarmupReport report = Warm(options_);
  ASSERT_EQ(report.results.size(), 5u);
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 5) << FormatSummary(report);
  EXPECT_EQ(report.results[0].job.arch, "sm_90a");
  EXPECT_EQ(report.results[1].job.arch, "sm_90a");
  EXPECT_EQ(report.results[2].job.arch, "sm_80");
  EXPECT_NE(report.results[1].key, report.results[2].key);
}

// An entry's pass config reaches the lowering: its key is the one compile()
// gives with that config, not the default's.
TEST_F(WarmupTest, PassConfigIsCompiledAndKeyed) {
  manifest_.kernels.resize(1);
  programs_.resize(1);
  manifest_.kernels[0].pass_config.disable_async_copy = true;
  WarmupReport report = Warm(options_);
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 1) << FormatSummary(report);
  absl::StatusOr<LoweredKernel> lowered = LowerWithCodegen(
      programs_[0].at("sm_80"),
      {.arch = "sm_80", .pass_config = {.disable_async_copy = true}});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::string> key =
      jit::ComputeCacheKey(lowered->source, lowered->options);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(report.results[0].key, *key);
  EXPECT_NE(report.results[0].key, KeyOf(0, "sm_80"));
  EXPECT_THAT(lowered->source.text, HasSubstr("async_copy=0"));
}

TEST_F(WarmupTest, DryRunListsMissingAndWritesNothing) {
  options_.dry_run = true;
  WarmupReport before = Warm(options_);
  EXPECT_EQ(before.Count(JobOutcome::kMissing), 3);
  EXPECT_FALSE(before.ok());
  EXPECT_THAT(FormatSummary(before), HasSubstr("3 of 3 kernels missing"));
  EXPECT_THAT(FormatSummary(before),
              HasSubstr("missing: kernels[1] seed_gemm"));
  EXPECT_THAT(testing::FilesUnder(cache_.path()), IsEmpty());

  WarmupOptions real = options_;
  real.dry_run = false;
  real.archs = {"sm_80"};
  manifest_.kernels.resize(2);  // warm two of the three
  programs_.resize(2);
  Warm(real);
  SetUp();  // the whole manifest again, same cache
  options_.dry_run = true;
  WarmupReport after = Warm(options_);
  EXPECT_EQ(after.Count(JobOutcome::kCached), 2);
  EXPECT_EQ(after.Count(JobOutcome::kMissing), 1);
  EXPECT_EQ(after.results[2].outcome, JobOutcome::kMissing);
}

// A compiler crash in a child is one failed job with the signal named; the
// other jobs finish, nothing half-written stays, and the job succeeds later.
TEST_F(WarmupTest, CrashingCompileIsIsolatedAndReported) {
  options_.child_hook_for_testing = [](const WarmupJob& job,
                                       absl::string_view stage) {
    if (job.entry->index == 1 && stage == "compile") raise(SIGSEGV);
  };
  WarmupReport report = Warm(options_);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 2) << FormatSummary(report);
  ASSERT_EQ(report.results[1].outcome, JobOutcome::kFailed);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer turns the SIGSEGV into a report and exit status 1.
  EXPECT_THAT(report.results[1].error, HasSubstr("exited with status"));
#else
  EXPECT_THAT(report.results[1].error,
              HasSubstr("killed by signal 11 (SIGSEGV"));
#endif
  EXPECT_EQ(report.results[1].key, KeyOf(1, "sm_80"));
  EXPECT_THAT(FormatSummary(report), HasSubstr("FAILED: kernels[1] seed_gemm"));
  EXPECT_THAT(LeftoversUnder(cache_.path()), IsEmpty());

  options_.child_hook_for_testing = nullptr;
  WarmupReport again = Warm(options_);
  EXPECT_EQ(again.Count(JobOutcome::kCompiled), 1);
  EXPECT_EQ(again.Count(JobOutcome::kCached), 2);
}

TEST_F(WarmupTest, HungCompileIsKilledAtTheTimeout) {
  options_.timeout = absl::Seconds(1);
  options_.child_hook_for_testing = [](const WarmupJob& job,
                                       absl::string_view stage) {
    if (job.entry->index == 0 && stage == "lower") pause();
  };
  manifest_.kernels.resize(1);
  programs_.resize(1);
  const absl::Time start = absl::Now();
  WarmupReport report = Warm(options_);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_EQ(report.results[0].outcome, JobOutcome::kFailed);
  EXPECT_THAT(report.results[0].error, HasSubstr("past the timeout"));
}

TEST_F(WarmupTest, LoweringErrorsAreFailedJobs) {
  options_.lower = [](const Program&,
                      const LowerOptions&) -> absl::StatusOr<LoweredKernel> {
    return absl::UnimplementedError("no codegen for this op yet");
  };
  WarmupReport report = Warm(options_);
  EXPECT_EQ(report.Count(JobOutcome::kFailed), 3);
  EXPECT_THAT(report.results[0].error,
              HasSubstr("lowering failed: UNIMPLEMENTED: no codegen"));
}

TEST_F(WarmupTest, NvrtcErrorsAreFailedJobsWithTheLog) {
  options_.lower = [](const Program& p,
                      const LowerOptions& o) -> absl::StatusOr<LoweredKernel> {
    LoweredKernel k;
    k.source = {.text = "extern \"C\" __global__ void broken() { nope; }",
                .entry = "broken"};
    k.options.arch = o.arch;
    return k;
  };
  manifest_.kernels.resize(1);
  programs_.resize(1);
  WarmupReport report = Warm(options_);
  ASSERT_EQ(report.Count(JobOutcome::kFailed), 1);
  EXPECT_THAT(report.results[0].error, HasSubstr("NVRTC"));
  EXPECT_THAT(report.results[0].error, HasSubstr("nope"));
}

// verify removes a damaged entry; the next warmup compiles just that one.
TEST_F(WarmupTest, CorruptEntryFoundByVerifyAndRebuilt) {
  ASSERT_EQ(Warm(options_).Count(JobOutcome::kCompiled), 3);
  const jit::CacheDirectory dir(cache_.path());
  const std::string path = dir.EntryPath(KeyOf(2, "sm_80"), ".cubin");
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFile(path, bytes);

  absl::StatusOr<jit::CacheVerifyReport> verify = dir.Verify();
  ASSERT_TRUE(verify.ok());
  EXPECT_EQ(verify->good, 2);
  EXPECT_EQ(verify->removed, std::vector<std::string>{KeyOf(2, "sm_80")});

  WarmupReport report = Warm(options_);
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 1);
  EXPECT_EQ(report.results[2].outcome, JobOutcome::kCompiled);
  EXPECT_EQ(dir.Verify()->good, 3);
}

// Without a verify first, the warmup itself treats a damaged entry as
// missing and rebuilds it.
TEST_F(WarmupTest, WarmupRebuildsACorruptEntryItself) {
  ASSERT_EQ(Warm(options_).Count(JobOutcome::kCompiled), 3);
  const jit::CacheDirectory dir(cache_.path());
  const std::string path = dir.EntryPath(KeyOf(0, "sm_80"), ".cubin");
  WriteFile(path, ReadFile(path).substr(0, 40));  // truncated
  options_.dry_run = true;
  EXPECT_EQ(Warm(options_).results[0].outcome, JobOutcome::kMissing);
  options_.dry_run = false;
  WarmupReport report = Warm(options_);
  EXPECT_EQ(report.results[0].outcome, JobOutcome::kCompiled);
  EXPECT_EQ(report.Count(JobOutcome::kCached), 2);
}

// A cache limit below the manifest's size evicts the run's own entries: the
// run says so and is not ok.
TEST_F(WarmupTest, EvictionByTheSizeLimitIsReported) {
  setenv("TESSEL_CACHE_MAX_BYTES", "1K", 1);
  WarmupReport report = Warm(options_);
  unsetenv("TESSEL_CACHE_MAX_BYTES");
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 3);
  EXPECT_EQ(report.evicted, 3);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(FormatSummary(report),
              HasSubstr("evicted again by the cache's size limit (1 KiB)"));
  EXPECT_TRUE(Warm(options_).ok());  // with the default limit
}

// A compile the cache cannot store (here a file where every shard folder
// would go; a full disk looks the same) fails its job with the write error.
// It was reported "compiled", then as removed by prune or clear.
TEST_F(WarmupTest, AStoreThatFailsFailsTheJob) {
  std::filesystem::create_directories(cache_.path() + "/v2");
  for (int shard = 0; shard < 256; ++shard) {
    char name[3];
    std::snprintf(name, sizeof(name), "%02x", shard);
    WriteFile(cache_.path() + "/v2/" + name, "blocker");
  }
  WarmupReport report = Warm(options_);
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 0);
  EXPECT_EQ(report.Count(JobOutcome::kFailed), 3);
  EXPECT_EQ(report.evicted, 0);
  const std::string summary = FormatSummary(report);
  EXPECT_THAT(summary, HasSubstr("compiled, but not stored in the cache"));
  EXPECT_THAT(summary, ::testing::Not(HasSubstr("removed from the cache")));
}

// An external `tessel-cache prune` while the warmup runs removes entries the
// run made: the summary says they were removed, not that the size limit
// (TESSEL_CACHE_MAX_BYTES) evicted them.
TEST_F(WarmupTest, ExternalPruneIsNotBlamedOnTheSizeLimit) {
  options_.jobs = 1;  // jobs 0 and 1 are stored before job 2 starts
  const std::string cache = cache_.path();
  options_.child_hook_for_testing = [cache](const WarmupJob& job,
                                            absl::string_view stage) {
    if (job.entry->index == 2 && stage == "compile") {
      (void)jit::CacheDirectory(cache).Prune(0);  // as tessel-cache prune
    }
  };
  WarmupReport report = Warm(options_);
  EXPECT_EQ(report.Count(JobOutcome::kCompiled), 3);
  EXPECT_EQ(report.evicted, 2);
  EXPECT_FALSE(report.ok());
  const std::string summary = FormatSummary(report);
  EXPECT_THAT(summary, ::testing::Not(HasSubstr("TESSEL_CACHE_MAX_BYTES")));
  EXPECT_THAT(summary, ::testing::Not(HasSubstr("evicted again by the "
                                                "cache's size limit")));
  EXPECT_THAT(summary, HasSubstr("2 of this run's kernels were removed"));
}

TEST_F(WarmupTest, BadOptionsAreErrors) {
  WarmupOptions o = options_;
  o.archs = {};
  EXPECT_THAT(RunWarmup(manifest_, programs_, o).status().message(),
              HasSubstr("no arch given"));
  o.archs = {"hopper"};
  EXPECT_THAT(RunWarmup(manifest_, programs_, o).status().message(),
              HasSubstr("--arch hopper"));
  o = options_;
  o.jobs = 0;
  EXPECT_EQ(RunWarmup(manifest_, programs_, o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = options_;
  o.cache_dir = "/proc/no-such-place";
  EXPECT_EQ(RunWarmup(manifest_, programs_, o).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tessel::tools
