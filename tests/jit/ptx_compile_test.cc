// PTX through the ptxas program (no GPU needed): cubins, errors, options,
// finding ptxas, its temp folder, threads, the isolated child, the cache key
// and the disk cache.
#include "jit/ptx_compile.h"
#include "jit/ptxas_version.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <latch>
#include <thread>

#include "absl/strings/str_cat.h"
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
using ::testing::MatchesRegex;
using ::testing::Not;
using testing::ReadFile;
using ::testing::StartsWith;
using testing::TempDir;
using testing::WriteFile;

using testing::ScopedEnv;

// An executable shell script at `path`, to stand in for ptxas.
void WriteScript(const std::string& path, const std::string& body) {
  WriteFile(path, "#!/bin/sh\n" + body + "\n");
  ASSERT_EQ(chmod(path.c_str(), 0700), 0);
}

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

TEST(PtxasTest, VersionIsParsedFromVersionOutput) {
  EXPECT_EQ(internal::ParsePtxasVersion(
                "ptxas: NVIDIA (R) Ptx optimizing assembler\n"
                "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                "Built on Wed_Aug_20_01:55:12_PM_PDT_2025\n"
                "Cuda compilation tools, release 13.0, V13.0.88\n"
                "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            "13.0.88");
  EXPECT_EQ(internal::ParsePtxasVersion(
                "Cuda compilation tools, release 12.4, V12.4.131"),
            "12.4.131");
  EXPECT_EQ(internal::ParsePtxasVersion(""), "unknown");
  EXPECT_EQ(internal::ParsePtxasVersion("ptxas fatal   : Unknown option"),
            "unknown");
  EXPECT_EQ(internal::ParsePtxasVersion(
                "Cuda compilation tools, release 13.0, Vsoon"),
            "unknown");
}

TEST(PtxasTest, TheToolkitsPtxasIsFound) {
  ScopedEnv unset("TESSEL_PTXAS", nullptr);
  ASSERT_TRUE(PtxasAvailable()) << PtxasPath().status();
  EXPECT_THAT(*PtxasPath(), ::testing::EndsWith("/bin/ptxas"));
  EXPECT_THAT(PtxasVersion(), MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_EQ(PtxasVersion(), PtxasVersion());
}

TEST(PtxasTest, TesselPtxasNamingNothingIsFailedPrecondition) {
  ScopedEnv env("TESSEL_PTXAS", "/nonexistent/ptxas");
  EXPECT_FALSE(PtxasAvailable());
  EXPECT_EQ(PtxasPath().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(PtxasVersion(), "unknown");
  absl::StatusOr<Cubin> cubin = Compile(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cubin.status().message(), HasSubstr("/nonexistent/ptxas"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("TESSEL_PTXAS"));
}

TEST(PtxasTest, TesselPtxasIsRunWithTheOptionsAndFiles) {
  TempDir tmp;
  const std::string args = tmp / "args";
  // Logs its arguments, then compiles with the real ptxas.
  WriteScript(tmp / "ptxas", absl::StrCat("echo \"$@\" > ", args, "\nexec ",
                                          *PtxasPath(), " \"$@\""));
  ScopedEnv env("TESSEL_PTXAS", (tmp / "ptxas").c_str());
  EXPECT_EQ(*PtxasPath(), tmp / "ptxas");
  absl::StatusOr<Cubin> cubin =
      Compile(Add1Ptx(), {.arch = "sm_90a", .lineinfo = true});
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_THAT(
      ReadFile(args),
      MatchesRegex("-arch=sm_90a -lineinfo /.*/tessel-ptxas-[^/]+/"
                   "add1\\.ptx -o /.*/tessel-ptxas-[^/]+/out\\.cubin\n"));
}

TEST(PtxasTest, APtxasKilledByASignalIsInternal) {
  TempDir tmp;
  WriteScript(tmp / "ptxas", "echo about to crash >&2\nkill -SEGV $$");
  ScopedEnv env("TESSEL_PTXAS", (tmp / "ptxas").c_str());
  absl::StatusOr<Cubin> cubin = Compile(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(cubin.status().message(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("about to crash"));
}

TEST(PtxasTest, APtxasThatWritesNoCubinIsInternal) {
  TempDir tmp;
  WriteScript(tmp / "ptxas", "exit 0");
  ScopedEnv env("TESSEL_PTXAS", (tmp / "ptxas").c_str());
  absl::StatusOr<Cubin> cubin = Compile(Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(cubin.status().message(), HasSubstr("no cubin"));
}

// Each compile's folder is removed, whether ptxas succeeded or failed.
TEST(PtxasTest, TheTempFolderIsRemoved) {
  TempDir tmp;
  ScopedEnv env("TMPDIR", tmp.path().c_str());
  ASSERT_TRUE(Compile(Add1Ptx(), {.arch = "sm_90a"}).ok());
  ASSERT_FALSE(Compile(BrokenPtx(), {.arch = "sm_90a"}).ok());
  ASSERT_FALSE(
      Compile(Add1Ptx(), {.arch = "sm_90a", .extra = {"-no-such-flag"}}).ok());
  for (const auto& entry : std::filesystem::directory_iterator(tmp.path())) {
    EXPECT_THAT(entry.path().filename().string(),
                Not(::testing::StartsWith("tessel-ptxas-")));
  }
}

// Different modules compiled at once by several threads: each its own temp
// folder, pipe and ptxas.
TEST(PtxasTest, ThreadsCompileDifferentPtxAtOnce) {
  constexpr int kThreads = 2;
  constexpr int kRounds = 4;
  std::vector<CudaSource> sources;
  std::vector<std::string> expected;
  for (int t = 0; t < kThreads; ++t) {
    CudaSource source = Add1Ptx();
    // x[0] += t + 1, in a kernel named add1_t<t>.
    source.text = absl::StrReplaceAll(
        source.text, {{"add1", absl::StrCat("add1_t", t)},
                      {"0f3F800000", t == 0 ? "0f3F800000" : "0f40000000"}});
    source.entry = absl::StrCat("add1_t", t);
    absl::StatusOr<Cubin> alone = Compile(source, {.arch = "sm_90a"});
    ASSERT_TRUE(alone.ok()) << alone.status();
    expected.push_back(alone->image);
    sources.push_back(std::move(source));
  }
  ASSERT_NE(expected[0], expected[1]);
  std::vector<absl::Status> failures(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < kRounds; ++round) {
        absl::StatusOr<Cubin> cubin = Compile(sources[t], {.arch = "sm_90a"});
        if (!cubin.ok()) {
          failures[t] = cubin.status();
        } else if (cubin->image != expected[t] ||
                   cubin->lowered_entry != sources[t].entry) {
          failures[t] = absl::InternalError("another thread's cubin");
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[t].ok()) << failures[t];
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

  // Another ptxas (another version) is another key.
  {
    TempDir tmp;
    WriteScript(tmp / "ptxas",
                "echo 'Cuda compilation tools, release 99.9, V99.9.1'");
    ScopedEnv env("TESSEL_PTXAS", (tmp / "ptxas").c_str());
    // Its version memo (ptxas_version.h) goes with the temp folder.
    ScopedEnv cache("TESSEL_CACHE_DIR", (tmp / "cache").c_str());
    EXPECT_EQ(PtxasVersion(), "99.9.1");
    EXPECT_NE(*ComputeCacheKey(ptx, options), *ptx_key);
    EXPECT_EQ(*ComputeCacheKey(ptx, options), ComputeCacheKey(other));
  }
  EXPECT_EQ(*ComputeCacheKey(ptx, options), *ptx_key);
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
