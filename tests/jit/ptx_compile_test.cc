// PTX through the ptxas program (no GPU needed): cubins, errors, options, the
// isolated child, the cache key and the disk cache.
#include "jit/ptx_compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
#include "jit/cache_directory.h"
#include "jit/cache_key.h"
#include "jit/counters.h"
#include "jit/isolated_compile.h"
#include "jit/kernel_cache.h"
#include "nlohmann/json.hpp"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using testing::Add1Ptx;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFile;
using ::testing::StartsWith;
using testing::TempDir;

// Line 9 of Add1Ptx is the add.f32; "addx" is no instruction.
CudaSource BrokenPtx() {
  CudaSource source = Add1Ptx("sm_90a");
  source.text = absl::StrReplaceAll(source.text, {{"add.f32", "addx.f32"}});
  return source;
}

TEST(PtxCompileTest, CompilesForSm90aAndSm80) {
  for (const std::string arch : {"sm_90a", "sm_80"}) {
    absl::StatusOr<Cubin> cubin = Compile(Add1Ptx(arch), {.arch = arch});
    ASSERT_TRUE(cubin.ok()) << arch << ": " << cubin.status();
    EXPECT_GT(cubin->image.size(), 64u);
    EXPECT_THAT(cubin->image, StartsWith("\x7f"
                                         "ELF"));
    EXPECT_EQ(cubin->lowered_entry, "add1");  // as written: no mangling
    EXPECT_EQ(cubin->arch, arch);
    EXPECT_GT(cubin->compile_ms, 0);
  }
}

TEST(PtxCompileTest, CompilePtxIsWhatCompileCalls) {
  absl::StatusOr<Cubin> direct = CompilePtx(Add1Ptx(), {}, "sm_90a");
  absl::StatusOr<Cubin> through = Compile(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_TRUE(direct.ok() && through.ok())
      << direct.status() << through.status();
  EXPECT_EQ(direct->image, through->image);
}

TEST(PtxCompileTest, CountsCompiles) {
  const uint64_t before = GetJitCounters().nvrtc_compiles;
  ASSERT_TRUE(Compile(Add1Ptx(), {.arch = "sm_90a"}).ok());
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, before + 1);
}

TEST(PtxCompileTest, SyntaxErrorQuotesTheBadLine) {
  const CudaSource source = BrokenPtx();
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(cubin.status().message());
  EXPECT_THAT(message, HasSubstr("add1.ptx:9 |   addx.f32 %f2, %f1"));
  EXPECT_THAT(message, HasSubstr("sm_90a"));
  // ptxas's log, naming the file without the temp folder it was in.
  EXPECT_THAT(message, HasSubstr("ptxas add1.ptx, line 9; error"));
  EXPECT_THAT(message, Not(HasSubstr("tessel-ptxas-")));
  EXPECT_THAT(message, HasSubstr("ptxas could not compile"));
  const size_t at = message.find("full source: ");
  ASSERT_NE(at, std::string::npos);
  const std::string path = message.substr(at + 13);
  EXPECT_THAT(path, ::testing::EndsWith(".ptx"));
  EXPECT_EQ(ReadFile(path), source.text);
}

TEST(PtxCompileTest, TargetAboveTheArchIsAnError) {
  absl::StatusOr<Cubin> cubin = Compile(Add1Ptx("sm_90a"), {.arch = "sm_80"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("for sm_80"));
}

TEST(PtxCompileTest, HeadersAreRefused) {
  CudaSource source = Add1Ptx();
  source.headers = {{"prelude.cuh", "// nothing\n"}};
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("prelude.cuh"));
}

TEST(PtxCompileTest, MissingEntryIsAnError) {
  CudaSource source = Add1Ptx();
  source.entry = "add2";
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("'add2'"));
  source.entry = "";
  EXPECT_EQ(Compile(source, {.arch = "sm_90a"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PtxCompileTest, OptionsArePassedThroughAndCudaOnesIgnored) {
  EXPECT_EQ(PtxasOptions({.fast_math = true,
                          .lineinfo = true,
                          .defines = {{"N", "4"}},
                          .extra = {"-O2"}},
                         "sm_90a"),
            (std::vector<std::string>{"-arch=sm_90a", "-lineinfo", "-O2"}));
  EXPECT_EQ(NormalizedOptionsFor(SourceLanguage::kPtx, {}, "sm_80"),
            std::vector<std::string>{"-arch=sm_80"});
  EXPECT_EQ(NormalizedOptionsFor(SourceLanguage::kCuda, {}, "sm_80"),
            NormalizedOptions({}, "sm_80"));

  absl::StatusOr<Cubin> cubin = Compile(Add1Ptx(), {.arch = "sm_90a",
                                                    .fast_math = true,
                                                    .lineinfo = true,
                                                    .defines = {{"N", "4"}},
                                                    .extra = {"-O2"}});
  EXPECT_TRUE(cubin.ok()) << cubin.status();
  cubin = Compile(Add1Ptx(), {.arch = "sm_90a", .extra = {"-no-such-flag"}});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cubin.status().message(), HasSubstr("-no-such-flag"));
}

TEST(PtxCompileTest, IsolatedCompileCarriesTheLanguage) {
  const uint64_t before = GetJitCounters().nvrtc_compiles;
  absl::StatusOr<Cubin> isolated =
      CompileIsolated(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_TRUE(isolated.ok()) << isolated.status();
  absl::StatusOr<Cubin> local = Compile(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(isolated->image, local->image);
  EXPECT_EQ(isolated->lowered_entry, "add1");

  absl::StatusOr<Cubin> bad = CompileIsolated(BrokenPtx(), {.arch = "sm_90a"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("add1.ptx:9 |"));
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, before + 3);
}

TEST(PtxCacheKeyTest, LanguageIsPartOfTheKey) {
  const CudaSource ptx = Add1Ptx();
  CudaSource cuda = ptx;
  cuda.language = SourceLanguage::kCuda;
  const CompileOptions options{.arch = "sm_90a"};
  absl::StatusOr<std::string> ptx_key = ComputeCacheKey(ptx, options);
  absl::StatusOr<std::string> cuda_key = ComputeCacheKey(cuda, options);
  ASSERT_TRUE(ptx_key.ok() && cuda_key.ok());
  EXPECT_NE(*ptx_key, *cuda_key);

  absl::StatusOr<CacheKeyFields> fields = MakeCacheKeyFields(ptx, options);
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->language, SourceLanguage::kPtx);
  EXPECT_EQ(fields->ptxas_version, PtxasVersion());
  EXPECT_EQ(fields->options, std::vector<std::string>{"-arch=sm_90a"});
  EXPECT_EQ(ComputeCacheKey(*fields), *ptx_key);

  // What shapes a PTX cubin changes the key; CUDA-only options do not.
  EXPECT_NE(*ComputeCacheKey(ptx, {.arch = "sm_80"}), *ptx_key);
  EXPECT_NE(*ComputeCacheKey(ptx, {.arch = "sm_90a", .lineinfo = true}),
            *ptx_key);
  EXPECT_EQ(
      *ComputeCacheKey(
          ptx, {.arch = "sm_90a", .fast_math = true, .defines = {{"N", "4"}}}),
      *ptx_key);
  CacheKeyFields other = *fields;
  other.ptxas_version = "99.9.1";
  EXPECT_NE(ComputeCacheKey(other), *ptx_key);
}

// Keys computed before PTX sources existed (tessel 0.1.0, NVRTC 13.0): a CUDA
// source's key must not move, or every on-disk entry would be missed.
TEST(PtxCacheKeyTest, CudaKeysAreUnchanged) {
  const CudaSource source{
      .text = "extern \"C\" __global__ void saxpy(float* y) { y[0] += 1; }\n",
      .entry = "saxpy",
      .headers = {{"a.cuh", "#define A 1\n"}}};
  const std::vector<std::pair<CompileOptions, std::string>> cases = {
      {{.arch = "sm_90a"}, "9481eede0021e4dab41f3d3f833f424a"},
      {{.arch = "sm_80",
        .fast_math = true,
        .lineinfo = true,
        .defines = {{"N", "4"}},
        .extra = {"-G"}},
       "efa4d926cf97d4d9483ed0b6b8e418d7"},
  };
  for (const auto& [options, key] : cases) {
    absl::StatusOr<CacheKeyFields> fields = MakeCacheKeyFields(source, options);
    ASSERT_TRUE(fields.ok());
    EXPECT_TRUE(fields->ptxas_version.empty());
    fields->tessel_version = "0.1.0";
    fields->nvrtc_version = "13.0";
    EXPECT_EQ(ComputeCacheKey(*fields), key) << options.arch;
  }
}

TEST(PtxKernelCacheTest, EntryRoundTripsAndVerifies) {
  TempDir tmp;
  const CudaSource source = Add1Ptx();
  const CompileOptions options{.arch = "sm_90a"};
  std::string key, image;
  {
    KernelCache cache({.disk = {.dir = tmp.path()}});
    absl::StatusOr<CachedCubin> first = cache.GetCubin(source, options);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->origin, CubinOrigin::kCompiled);
    EXPECT_TRUE(first->stored.ok()) << first->stored;
    key = first->key;
    image = first->cubin->image;
  }
  KernelCache fresh({.disk = {.dir = tmp.path()}});  // as a new process
  const uint64_t compiles = GetJitCounters().nvrtc_compiles;
  absl::StatusOr<CachedCubin> hit = fresh.GetCubin(source, options);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->origin, CubinOrigin::kDisk);
  EXPECT_EQ(hit->cubin->image, image);
  EXPECT_EQ(hit->cubin->lowered_entry, "add1");
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, compiles);

  // The same text as CUDA is another key: it misses (and fails to compile).
  CudaSource as_cuda = source;
  as_cuda.language = SourceLanguage::kCuda;
  EXPECT_FALSE(fresh.GetCubin(as_cuda, options).ok());

  CacheDirectory dir(tmp.path());
  EXPECT_EQ(ReadFile(dir.EntryPath(key, ".cu")), source.text);
  const nlohmann::json meta =
      nlohmann::json::parse(ReadFile(dir.EntryPath(key, ".json")));
  EXPECT_EQ(meta["language"], "ptx");
  EXPECT_EQ(meta["ptxas_version"], PtxasVersion());
  EXPECT_FALSE(meta.contains("nvjitlink_version"));
  EXPECT_EQ(meta["options"], nlohmann::json({"-arch=sm_90a"}));
  absl::StatusOr<CacheVerifyReport> report = dir.Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->good, 1);
  EXPECT_TRUE(report->problems.empty())
      << ::testing::PrintToString(report->problems);
}

}  // namespace
}  // namespace tessel::jit
