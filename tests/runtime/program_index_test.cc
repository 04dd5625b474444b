// The program index (src/runtime/program_index.h): a process that compiles
// a program compiled before, by this build, finds its record and the cubin
// and runs no pass; anything that shapes the kernel changes the key; a
// damaged record or one whose cubin is gone is a miss, never a wrong kernel.
// A fresh process is stood in for by emptying the memo and the memory
// cache. No GPU needed: NVRTC compiles for sm_90a / sm_80 without one.
#include "src/runtime/program_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "jit/cache_directory.h"
#include "jit/counters.h"
#include "jit/kernel_cache.h"
#include "nlohmann/json.hpp"
#include "src/runtime/program_cache.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"
#include "tests/common/temp_dir.h"

namespace tessel {
namespace {

using test_common::ReadFile;
using test_common::TempDir;
using test_common::WriteFile;
using ::testing::HasSubstr;

// The default kernel cache reads TESSEL_CACHE_DIR once: a folder of this
// binary's own, set before any compile.
const TempDir& CacheRoot() {
  static const TempDir* const root = [] {
    auto* dir = new TempDir;
    setenv("TESSEL_CACHE_DIR", dir->path().c_str(), 1);
    return dir;
  }();
  return *root;
}

class ProgramIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CacheRoot();
    ASSERT_TRUE(jit::KernelCache::Default().disk().enabled())
        << jit::KernelCache::Default().disk().disabled_reason();
  }
  // What a new process starts with: no memo, no cubins in memory.
  static void ForgetThisProcess() {
    runtime::ProgramCache::Global().Clear();
    jit::KernelCache::Default().ClearMemory();
  }
  static std::string Key(const ir::Program& p, const CompileOptions& o) {
    std::optional<std::string> key = runtime::ProgramIndexKey(p, o);
    EXPECT_TRUE(key.has_value());
    return key.value_or("");
  }
  static std::string RecordPath(const std::string& key) {
    return jit::KernelCache::Default().disk().RecordPath(key);
  }
  static CompiledKernel Compile(const ir::Program& p, const CompileOptions& o) {
    absl::StatusOr<CompiledKernel> k = compile(p, o);
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? *k : CompiledKernel();
  }
};

TEST_F(ProgramIndexTest, ANewProcessFindsTheKernelWithoutLowering) {
  // Symbolic sizes: the grid is written down in terms of them.
  const ir::Program p = testing::Gemm({.symbolic = true});
  const CompileOptions o{.target = Target::sm90a()};
  CompiledKernel first = Compile(p, o);
  const std::string key = Key(p, o);
  EXPECT_THAT(ReadFile(RecordPath(key)), HasSubstr("[\"dim\","));

  ForgetThisProcess();
  std::shared_ptr<runtime::KernelImpl> found = runtime::FindIndexed(key, p, o);
  ASSERT_NE(found, nullptr);
  EXPECT_NE(found->relowering, nullptr);  // no source yet: no pass ran
  EXPECT_TRUE(found->source.empty());

  ForgetThisProcess();
  const uint64_t hits = jit::GetJitCounters().index_hits;
  CompiledKernel again = Compile(testing::Gemm({.symbolic = true}), o);
  EXPECT_EQ(jit::GetJitCounters().index_hits, hits + 1);
  EXPECT_STREQ(again.cache_origin(), "disk");
  EXPECT_EQ(again.entry(), first.entry());
  EXPECT_EQ(again.threads(), first.threads());
  EXPECT_EQ(again.shared_memory_bytes(), first.shared_memory_bytes());
  EXPECT_EQ(again.cubin_bytes(), first.cubin_bytes());
  EXPECT_EQ(again.schedule(), first.schedule());
  // Made again on demand, the same text.
  EXPECT_EQ(again.source(), first.source());
  EXPECT_EQ(again.lowered_ir(), first.lowered_ir());
}

TEST_F(ProgramIndexTest, TheKeyCoversWhatShapesTheKernel) {
  const ir::Program p = testing::Elementwise(1000);
  const CompileOptions o{.target = Target::sm90a()};
  const std::string key = Key(p, o);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(Key(testing::Elementwise(1000), o), key);  // built again
  EXPECT_NE(Key(testing::Elementwise(1024), o), key);
  EXPECT_NE(Key(p, {.target = Target::sm80()}), key);
  EXPECT_NE(Key(p, {.target = Target::sm90a(), .fast_math = true}), key);
  EXPECT_NE(Key(p, {.target = Target::sm90a(), .lineinfo = true}), key);
  EXPECT_NE(Key(p, {.target = Target::sm90a(), .direct_ptx = false}), key);
  PassConfig no_tma;
  no_tma.disable_tma_lower = true;
  EXPECT_NE(Key(p, {.target = Target::sm90a(), .pass_config = no_tma}), key);
  // Not indexed: the interpreter, isolated compiles, IR dumps.
  EXPECT_FALSE(runtime::ProgramIndexKey(p, {.target = Target::cpu()}));
  EXPECT_FALSE(runtime::ProgramIndexKey(
      p, {.target = Target::sm90a(), .isolated = true}));
  PassConfig dump;
  dump.dump_ir = CacheRoot() / "dump";
  EXPECT_FALSE(runtime::ProgramIndexKey(
      p, {.target = Target::sm90a(), .pass_config = dump}));
}

TEST_F(ProgramIndexTest, ADamagedOrForeignRecordIsAMiss) {
  const ir::Program p = testing::Elementwise(2000);
  const ir::Program other = testing::Elementwise(3000);
  const CompileOptions o{.target = Target::sm90a()};
  CompiledKernel first = Compile(p, o);
  Compile(other, o);
  const std::string key = Key(p, o);
  const std::string good = ReadFile(RecordPath(key));
  ASSERT_FALSE(good.empty());
  // Changed fields, sealed again (the sum right): each is still refused.
  auto resealed = [&](auto change) {
    nlohmann::json r = nlohmann::json::parse(good);
    r.erase("sum");
    change(r);
    const std::string text = r.dump();
    char hex[17];
    std::snprintf(
        hex, sizeof(hex), "%016llx",
        static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
    r["sum"] = hex;
    return r.dump();
  };
  // (Sealed again unchanged, it is found: the cases below fail for their
  // change, not their sum.)
  WriteFile(RecordPath(key), resealed([](nlohmann::json&) {}));
  ForgetThisProcess();
  EXPECT_NE(runtime::FindIndexed(key, p, o), nullptr);
  nlohmann::json digit = nlohmann::json::parse(good);
  digit["threads"] = digit["threads"].get<int>() + 1;  // not resealed
  for (const std::string& bytes :
       {std::string(""), std::string("{"), std::string("[1, 2]"),
        std::string("\xff\xfe garbage", 10), digit.dump(),
        resealed([](nlohmann::json& r) { r["threads"] = "many"; }),
        resealed([](nlohmann::json& r) {
          r["grid"] = {{"dim", 7}};
        }),
        resealed([](nlohmann::json& r) {
          r["grid"] = {{"bin", 0, {"int", 2, 1}, {"dim", 0}}};
        }),
        resealed(
            [](nlohmann::json& r) { r["cubin_key"] = std::string(32, '0'); }),
        resealed([](nlohmann::json& r) {
          r["signature"].push_back({0, 8});
        }),
        resealed([](nlohmann::json& r) { r["key"] = std::string(32, 'f'); }),
        ReadFile(RecordPath(Key(other, o)))}) {  // another program's
    SCOPED_TRACE(bytes.substr(0, 60));
    WriteFile(RecordPath(key), bytes);
    ForgetThisProcess();
    EXPECT_EQ(runtime::FindIndexed(key, p, o), nullptr);
    ForgetThisProcess();
    CompiledKernel again = Compile(p, o);  // lowers; the cubin is on disk
    EXPECT_STREQ(again.cache_origin(), "disk");
    EXPECT_EQ(again.source(), first.source());
    EXPECT_EQ(ReadFile(RecordPath(key)), good);  // written again
  }
}

TEST_F(ProgramIndexTest, ARecordOthersCouldHaveWrittenIsNotRead) {
  const ir::Program p = testing::Elementwise(6000);
  const CompileOptions o{.target = Target::sm90a()};
  Compile(p, o);
  const std::string key = Key(p, o);
  const std::string path = RecordPath(key);
  const std::string shard = std::filesystem::path(path).parent_path().string();
  ASSERT_EQ(chmod(shard.c_str(), 0777), 0);
  ForgetThisProcess();
  EXPECT_EQ(runtime::FindIndexed(key, p, o), nullptr);
  ASSERT_EQ(chmod(shard.c_str(), 0700), 0);
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  ForgetThisProcess();
  EXPECT_EQ(runtime::FindIndexed(key, p, o), nullptr);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  // A symlink in its place is not followed.
  const std::string elsewhere = CacheRoot() / "elsewhere";
  std::filesystem::rename(path, elsewhere);
  std::filesystem::create_symlink(elsewhere, path);
  ForgetThisProcess();
  EXPECT_EQ(runtime::FindIndexed(key, p, o), nullptr);
  std::filesystem::remove(path);
  std::filesystem::rename(elsewhere, path);
  ForgetThisProcess();
  EXPECT_NE(runtime::FindIndexed(key, p, o), nullptr);
}

TEST_F(ProgramIndexTest, ARecordWhoseCubinIsGoneIsAMiss) {
  const ir::Program p = testing::Elementwise(4000);
  const CompileOptions o{.target = Target::sm80()};
  CompiledKernel first = Compile(p, o);
  const std::string key = Key(p, o);
  const nlohmann::json record =
      nlohmann::json::parse(ReadFile(RecordPath(key)));
  jit::CacheDirectory dir(CacheRoot().path());
  ASSERT_TRUE(dir.Remove(record["cubin_key"].get<std::string>()).ok());
  ForgetThisProcess();
  EXPECT_EQ(runtime::FindIndexed(key, p, o), nullptr);
  CompiledKernel again = Compile(p, o);
  EXPECT_STREQ(again.cache_origin(), "compiled");
  EXPECT_EQ(again.source(), first.source());
}

TEST_F(ProgramIndexTest, ClearingTheCacheRemovesTheRecords) {
  const ir::Program p = testing::Elementwise(5000);
  const CompileOptions o{.target = Target::sm90a()};
  Compile(p, o);
  const std::string key = Key(p, o);
  ASSERT_FALSE(ReadFile(RecordPath(key)).empty());
  ASSERT_TRUE(jit::CacheDirectory(CacheRoot().path()).Clear().ok());
  EXPECT_FALSE(jit::KernelCache::Default().disk().LoadRecord(key));
}

}  // namespace
}  // namespace tessel
