#include "jit/isolated_compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "jit/kernel_cache.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using testing::SaxpySource;

// The hooks run in the forked child only.
void CrashWithSegv() {
  signal(SIGSEGV, SIG_DFL);  // past any sanitizer's handler
  raise(SIGSEGV);
}
void Hang() { sleep(60); }

class IsolatedCompileTest : public ::testing::Test {
 protected:
  void TearDown() override {
    internal::SetIsolatedChildHookForTesting(nullptr);
  }
};

TEST_F(IsolatedCompileTest, MatchesAnInProcessCompile) {
  absl::StatusOr<Cubin> isolated =
      CompileIsolated(SaxpySource(), {.arch = "sm_90a"});
  ASSERT_TRUE(isolated.ok()) << isolated.status();
  absl::StatusOr<Cubin> local = Compile(SaxpySource(), {.arch = "sm_90a"});
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(isolated->image, local->image);
  EXPECT_EQ(isolated->lowered_entry, "saxpy");
  EXPECT_EQ(isolated->arch, "sm_90a");
}

TEST_F(IsolatedCompileTest, CompileErrorComesBackWhole) {
  CudaSource bad{.text = "extern \"C\" __global__ void k() {\n  oops;\n}\n",
                 .entry = "k"};
  absl::StatusOr<Cubin> cubin = CompileIsolated(bad, {.arch = "sm_80"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("k.cu:2 |   oops;"));
}

TEST_F(IsolatedCompileTest, CrashBecomesAStatusNamingTheSignal) {
  internal::SetIsolatedChildHookForTesting(&CrashWithSegv);
  absl::StatusOr<Cubin> cubin =
      CompileIsolated(SaxpySource(), {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(cubin.status().message(), HasSubstr("signal 11 (SIGSEGV"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("'saxpy' for sm_90a"));
  // The host lives on and compiles the next kernel.
  internal::SetIsolatedChildHookForTesting(nullptr);
  EXPECT_TRUE(CompileIsolated(SaxpySource(), {.arch = "sm_90a"}).ok());
}

TEST_F(IsolatedCompileTest, HangIsKilledAtTheTimeout) {
  internal::SetIsolatedChildHookForTesting(&Hang);
  absl::StatusOr<Cubin> cubin = CompileIsolated(
      SaxpySource(), {.arch = "sm_90a"}, absl::Milliseconds(300));
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(IsolatedCompileTest, CacheInIsolatedModeReportsTheCrash) {
  testing::TempDir tmp;
  internal::SetIsolatedChildHookForTesting(&CrashWithSegv);
  KernelCache cache({.disk = {.dir = tmp.path()}, .isolated = true});
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(SaxpySource("crash"), {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_THAT(cubin.status().message(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(testing::FilesUnder(tmp.path()), ::testing::IsEmpty());
}

}  // namespace
}  // namespace tessel::jit
