// compile()'s program memo (src/runtime/program_cache.h): a repeat compile
// skips the passes, and only an equal program with equal options hits.
// No GPU needed: NVRTC compiles for sm_90a / sm_80 without one.
#include "src/runtime/program_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "tessel/compile.h"
#include "tessel/runtime.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

runtime::ProgramCache::Stats Stats() {
  return runtime::ProgramCache::Global().stats();
}

// The elementwise program of size n, put in / looked up in `cache`.
void Put(runtime::ProgramCache& cache, int n, const CompileOptions& o,
         const runtime::KernelImpl& impl) {
  const ir::Program p = testing::Elementwise(n);
  runtime::ProgramCache::Key key = runtime::ProgramCache::KeyOf(o);
  cache.Insert(key, p, impl);
}
bool Has(runtime::ProgramCache& cache, int n, const CompileOptions& o) {
  const ir::Program p = testing::Elementwise(n);
  runtime::ProgramCache::Key key = runtime::ProgramCache::KeyOf(o);
  return cache.Find(key, p) != nullptr;
}

CompiledKernel Compile(const ir::Program& p, const CompileOptions& o) {
  absl::StatusOr<CompiledKernel> k = compile(p, o);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel();
}

TEST(ProgramCache, RepeatCompileHitsWithoutLowering) {
  const ir::Program p = testing::Elementwise(1000);
  const CompileOptions o{.target = Target::sm90a()};
  CompiledKernel first = Compile(p, o);
  const auto before = Stats();
  CompiledKernel again = Compile(testing::Elementwise(1000), o);
  const auto after = Stats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.misses, before.misses);
  // An equal program built again is found by its hash; the very program
  // compiled before, by its nodes, without hashing.
  EXPECT_EQ(after.same_object_hits, before.same_object_hits);
  EXPECT_EQ(again.source(), first.source());
  EXPECT_EQ(again.cubin_bytes(), first.cubin_bytes());
  EXPECT_STREQ(again.cache_origin(), "memory");
  CompiledKernel same = Compile(p, o);
  EXPECT_EQ(Stats().same_object_hits, after.same_object_hits + 1);
  EXPECT_EQ(Stats().hits, after.hits + 1);
  EXPECT_EQ(same.source(), first.source());
}

TEST(ProgramCache, AnythingThatChangesTheCodeMisses) {
  const CompileOptions o{.target = Target::sm90a()};
  Compile(testing::Elementwise(1001), o);
  auto misses = Stats().misses;
  Compile(testing::Elementwise(1002), o);  // another constant
  EXPECT_EQ(Stats().misses, ++misses);
  Compile(testing::Elementwise(1001), {.target = Target::sm80()});
  EXPECT_EQ(Stats().misses, ++misses);
  CompileOptions no_async = o;
  no_async.pass_config.disable_async_copy = true;
  Compile(testing::Elementwise(1001), no_async);
  EXPECT_EQ(Stats().misses, ++misses);
  CompileOptions fast = o;
  fast.fast_math = true;
  Compile(testing::Elementwise(1001), fast);
  EXPECT_EQ(Stats().misses, ++misses);
  // and each of those now hits
  const auto hits = Stats().hits;
  Compile(testing::Elementwise(1002), o);
  Compile(testing::Elementwise(1001), no_async);
  Compile(testing::Elementwise(1001), fast);
  EXPECT_EQ(Stats().hits, hits + 3);
}

TEST(ProgramCache, DumpingIrBypassesIt) {
  CompileOptions o{.target = Target::sm90a()};
  o.pass_config.dump_ir = "/nonexistent-dump-dir-for-the-test";
  EXPECT_FALSE(runtime::ProgramCache::Applies(o));
  o.pass_config.dump_ir.clear();
  EXPECT_TRUE(runtime::ProgramCache::Applies(o));
}

TEST(ProgramCache, CpuTargetHitsToo) {
  const CompileOptions o{.target = Target::cpu()};
  Compile(testing::ReverseTile(3), o);
  const auto hits = Stats().hits;
  CompiledKernel k = Compile(testing::ReverseTile(3), o);
  EXPECT_EQ(Stats().hits, hits + 1);
  EXPECT_STREQ(k.cache_origin(), "none");
}

// Least recently used entries leave first, by count and by cubin bytes.
TEST(ProgramCache, StaysBounded) {
  runtime::ProgramCache cache(/*max_entries=*/2);
  const CompileOptions o{.target = Target::sm90a()};
  runtime::KernelImpl impl;
  Put(cache, 1, o, impl);
  Put(cache, 2, o, impl);
  ASSERT_TRUE(Has(cache, 1, o));  // now newest
  Put(cache, 3, o, impl);
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_TRUE(Has(cache, 1, o));
  EXPECT_FALSE(Has(cache, 2, o));
  EXPECT_TRUE(Has(cache, 3, o));

  runtime::ProgramCache small(/*max_entries=*/100, /*max_cubin_bytes=*/1000);
  runtime::KernelImpl big;
  auto cubin = std::make_shared<jit::Cubin>();
  cubin->image.resize(600);
  big.cubin.cubin = cubin;
  Put(small, 1, o, big);
  Put(small, 2, o, big);
  EXPECT_EQ(small.stats().entries, 1u);
  EXPECT_EQ(small.stats().cubin_bytes, 600u);
  EXPECT_TRUE(Has(small, 2, o));
}

}  // namespace
}  // namespace tessel
