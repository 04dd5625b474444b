// CUDA sources that offer a PTX translation (jit/ptx_translation.h): the
// translation runs only on a cache miss, the key is the CUDA text's plus the
// translator and ptxas, Unimplemented falls back to NVRTC; and ptxas's
// version, remembered on disk (jit/ptxas_version.h). No GPU needed.
#include "jit/ptx_translation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "jit/cache_directory.h"
#include "jit/cache_key.h"
#include "jit/kernel_cache.h"
#include "jit/ptx_compile.h"
#include "jit/ptxas_version.h"
#include "nlohmann/json.hpp"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using testing::ReadFile;
using testing::ScopedEnv;
using testing::TempDir;
using testing::WriteFile;

constexpr char kAdd1Cuda[] =
    "extern \"C\" __global__ void add1_cuda(float* x) { x[0] += 1.0f; }\n";

// add1 in CUDA C++, offering the PTX module Add1Ptx() (entry "add1") or
// `failure` as its translation; `*runs` counts the translations.
CudaSource Offering(std::atomic<int>* runs,
                    absl::Status failure = absl::OkStatus()) {
  CudaSource source{.text = kAdd1Cuda, .entry = "add1_cuda"};
  source.ptx_translator = "test-translator 1";
  source.to_ptx = [runs, failure]() -> absl::StatusOr<PtxModule> {
    ++*runs;
    if (!failure.ok()) return failure;
    return PtxModule{.text = testing::Add1Ptx().text, .entry = "add1"};
  };
  return source;
}

TEST(PtxTranslationTest, RunsOnlyOnAMissAndTheKeyIsTheCudaTexts) {
  TempDir tmp;
  std::atomic<int> runs = 0;
  const CudaSource source = Offering(&runs);
  const CompileOptions options{.arch = "sm_90a"};
  std::string key;
  {
    KernelCache cache({.disk = {.dir = tmp.path()}});
    absl::StatusOr<CachedCubin> first = cache.GetCubin(source, options);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->origin, CubinOrigin::kCompiled);
    EXPECT_EQ(first->cubin->lowered_entry, "add1");  // the PTX's name
    EXPECT_TRUE(first->stored.ok()) << first->stored;
    key = first->key;
  }
  EXPECT_EQ(runs, 1);
  // A new process: a disk hit, no translation.
  KernelCache fresh({.disk = {.dir = tmp.path()}});
  absl::StatusOr<CachedCubin> hit = fresh.GetCubin(source, options);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->origin, CubinOrigin::kDisk);
  EXPECT_EQ(hit->cubin->lowered_entry, "add1");
  EXPECT_EQ(runs, 1);

  // The key: the CUDA text's, with the translator and ptxas appended.
  CudaSource plain{.text = kAdd1Cuda, .entry = "add1_cuda"};
  EXPECT_NE(*ComputeCacheKey(plain, options), key);
  CudaSource other_translator = source;
  other_translator.ptx_translator = "test-translator 2";
  EXPECT_NE(*ComputeCacheKey(other_translator, options), key);
  absl::StatusOr<CacheKeyFields> fields = MakeCacheKeyFields(source, options);
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->ptx_translator, "test-translator 1");
  EXPECT_EQ(fields->ptxas_version, PtxasVersion());
  EXPECT_FALSE(fields->nvrtc_version.empty());  // it may fall back
  EXPECT_EQ(ComputeCacheKey(*fields), key);
  fields->ptxas_version = "99.9.1";
  EXPECT_NE(ComputeCacheKey(*fields), key);

  // The entry holds what was compiled, under the entry asked for.
  CacheDirectory dir(tmp.path());
  EXPECT_EQ(ReadFile(dir.EntryPath(key, ".cu")), testing::Add1Ptx().text);
  const nlohmann::json meta =
      nlohmann::json::parse(ReadFile(dir.EntryPath(key, ".json")));
  EXPECT_EQ(meta["language"], "ptx");
  EXPECT_EQ(meta["entry"], "add1_cuda");
  EXPECT_EQ(meta["lowered_entry"], "add1");
  absl::StatusOr<CacheVerifyReport> report = dir.Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->good, 1);
  EXPECT_TRUE(report->problems.empty())
      << ::testing::PrintToString(report->problems);
}

TEST(PtxTranslationTest, UnimplementedFallsBackToNvrtc) {
  TempDir tmp;
  std::atomic<int> runs = 0;
  const CudaSource source =
      Offering(&runs, absl::UnimplementedError("ptx: no f16 arithmetic"));
  absl::StatusOr<CompileInput> input =
      ChooseCompileInput(source, {.arch = "sm_90a"});
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->source.language, SourceLanguage::kCuda);
  EXPECT_EQ(input->source.text, kAdd1Cuda);
  EXPECT_EQ(input->ptx_fallback, "ptx: no f16 arithmetic");

  KernelCache cache({.disk = {.dir = tmp.path()}});
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(source, {.arch = "sm_90a"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->cubin->lowered_entry, "add1_cuda");
  const nlohmann::json meta = nlohmann::json::parse(
      ReadFile(CacheDirectory(tmp.path()).EntryPath(cubin->key, ".json")));
  EXPECT_FALSE(meta.contains("language"));  // CUDA C++
}

TEST(PtxTranslationTest, OtherTranslationErrorsAreReturned) {
  TempDir tmp;
  std::atomic<int> runs = 0;
  const CudaSource source =
      Offering(&runs, absl::InternalError("register out of range"));
  KernelCache cache({.disk = {.dir = tmp.path()}});
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(source, {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(cubin.status().message(), HasSubstr("add1_cuda"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("test-translator 1"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("register out of range"));
}

// A ptxas that refuses the PTX (here: one that fails; in the field, one
// older than the NVRTC in use) leaves the kernel to NVRTC, and says so.
TEST(PtxTranslationTest, APtxasThatRefusesThePtxLeavesTheKernelToNvrtc) {
  TempDir tmp;
  const std::string fake = tmp / "ptxas";
  WriteFile(fake,
            "#!/bin/sh\necho 'ptxas fatal : Unsupported .version 8.0' "
            ">&2\nexit 1\n");
  ASSERT_EQ(chmod(fake.c_str(), 0700), 0);
  ScopedEnv env("TESSEL_PTXAS", fake.c_str());
  std::atomic<int> runs = 0;
  KernelCache cache({.disk = {.dir = tmp / "cache"}});
  absl::StatusOr<CachedCubin> cubin =
      cache.GetCubin(Offering(&runs), {.arch = "sm_90a"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cubin->cubin->lowered_entry, "add1_cuda");  // NVRTC's
  EXPECT_THAT(cubin->cubin->log, HasSubstr("ptxas refused the PTX"));
  EXPECT_THAT(cubin->cubin->log, HasSubstr("Unsupported .version"));
}

TEST(PtxTranslationTest, PtxGetsPtxasOptionsOnly) {
  std::atomic<int> runs = 0;
  absl::StatusOr<CompileInput> input =
      ChooseCompileInput(Offering(&runs), {.arch = "sm_80",
                                           .lineinfo = true,
                                           .defines = {{"N", "4"}},
                                           .extra = {"-minimal"}});
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->source.language, SourceLanguage::kPtx);
  EXPECT_EQ(input->source.entry, "add1");
  EXPECT_FALSE(input->source.to_ptx);
  EXPECT_EQ(input->options.arch, "sm_80");
  EXPECT_TRUE(input->options.lineinfo);
  EXPECT_TRUE(input->options.defines.empty());
  EXPECT_TRUE(input->options.extra.empty());
}

// A stand-in ptxas that counts how often it is asked its version.
struct CountingPtxas {
  TempDir dir;
  std::string path = dir / "ptxas";
  std::string count = dir / "count";
  CountingPtxas() { Install("77.1", "77.1.5"); }
  // (Re)writes the script: another size and mtime, as an upgrade in place.
  void Install(const std::string& release, const std::string& version) {
    WriteFile(path, absl::StrCat("#!/bin/sh\necho x >> ", count,
                                 "\necho 'Cuda compilation tools, release ",
                                 release, ", V", version, "'\n"));
    EXPECT_EQ(chmod(path.c_str(), 0700), 0);
  }
  int runs() const {
    if (!std::filesystem::exists(count)) return 0;
    const std::string lines = ReadFile(count);
    return static_cast<int>(std::count(lines.begin(), lines.end(), '\n'));
  }
};

TEST(PtxasVersionTest, RememberedOnDiskForTheNextProcess) {
  CountingPtxas ptxas;
  TempDir root;
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 1);
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 1);
  // Without a cache root, ptxas is asked.
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, ""), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 2);
  // `tessel-cache clear` forgets it.
  ASSERT_TRUE(CacheDirectory(root.path()).Clear().ok());
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 3);
}

TEST(PtxasVersionTest, ANewPtxasFileIsAskedAgain) {
  CountingPtxas ptxas;
  TempDir root;
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  ptxas.Install("78.0", "78.0.1");
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "78.0.1");
  EXPECT_EQ(ptxas.runs(), 2);
}

TEST(PtxasVersionTest, ABadOrUntrustedMemoIsNotBelieved) {
  CountingPtxas ptxas;
  TempDir root;
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  const std::string folder = PtxasMemoFolder(root.path());
  std::string memo;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    memo = e.path();
  }
  ASSERT_FALSE(memo.empty());
  WriteFile(memo, "77.1.5; rm -rf /\n");
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 2);
  // Rewritten whole; then a folder others may write is not read.
  EXPECT_EQ(ReadFile(memo), "77.1.5\n");
  WriteFile(memo, "1.2.3\n");
  ASSERT_EQ(chmod(folder.c_str(), 0777), 0);
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "77.1.5");
  EXPECT_EQ(ptxas.runs(), 3);
  ASSERT_EQ(chmod(folder.c_str(), 0700), 0);
  EXPECT_EQ(internal::PtxasVersionOf(ptxas.path, root.path()), "1.2.3");
  EXPECT_EQ(ptxas.runs(), 3);
}

TEST(PtxasVersionTest, APtxasThatCannotSayIsNotRemembered) {
  TempDir dir, root;
  const std::string path = dir / "ptxas";
  WriteFile(path, "#!/bin/sh\nexit 3\n");
  ASSERT_EQ(chmod(path.c_str(), 0700), 0);
  EXPECT_EQ(internal::PtxasVersionOf(path, root.path()), "unknown");
  EXPECT_FALSE(std::filesystem::exists(PtxasMemoFolder(root.path())) &&
               !std::filesystem::is_empty(PtxasMemoFolder(root.path())));
}

}  // namespace
}  // namespace tessel::jit
