// Every test program goes through all the passes and NVRTC, for sm_80
// and sm_90a, without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "absl/strings/match.h"
#include "tessel/builder.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  const char* name;
  ir::Program (*make)();
};

ir::Program GemmDefault() { return testing::Gemm({}); }
ir::Program GemmBig() {
  return testing::Gemm({.m = 4096,
                        .n = 4096,
                        .k = 4096,
                        .bm = 256,
                        .bn = 128,
                        .bk = 64,
                        .threads = 256,
                        .stages = 3,
                        .panel = 8});
}
ir::Program GemmOdd() {
  return testing::Gemm(
      {.m = 333, .n = 264, .k = 200, .bm = 128, .bn = 128, .bk = 32});
}
ir::Program GemmSymbolic() { return testing::Gemm({.symbolic = true}); }
ir::Program GemmBf16Nt() {
  return testing::Gemm({.dtype = DataType::kBF16, .transpose_b = true});
}
ir::Program GemmTwoStages() {
  return testing::Gemm({.m = 128, .n = 128, .k = 512, .stages = 2});
}
ir::Program GemmK16() { return testing::Gemm({.k = 80, .bk = 16}); }
ir::Program GemmF32() {
  return testing::Gemm({.m = 64,
                        .n = 64,
                        .k = 64,
                        .bm = 32,
                        .bn = 32,
                        .bk = 16,
                        .threads = 128,
                        .stages = 2,
                        .dtype = DataType::kF32});
}
ir::Program Elementwise() { return testing::Elementwise(1000); }
ir::Program RoundTrip() { return testing::CopyRoundTrip(100, 136); }
ir::Program Reverse() { return testing::ReverseTile(4); }
ir::Program Double() { return testing::DoubleBuffered(8); }
ir::Program Atomic() { return testing::AtomicAccumulate(4, 100); }
ir::Program RowMax() { return testing::GemmRowMax(128, 128, 64); }
ir::Program ReduceCumsum() { return testing::ReduceAndCumsum(); }
ir::Program Mbarrier() { return testing::MbarrierPipeline(4); }

const Case kCases[] = {
    {"gemm", GemmDefault},
    {"gemm_4096", GemmBig},
    {"gemm_odd", GemmOdd},
    {"gemm_symbolic", GemmSymbolic},
    {"gemm_bf16_nt", GemmBf16Nt},
    {"gemm_two_stages", GemmTwoStages},
    {"gemm_k16", GemmK16},
    {"gemm_f32_fma", GemmF32},
    {"elementwise", Elementwise},
    {"copy_round_trip", RoundTrip},
    {"reverse_tile", Reverse},
    {"double_buffered", Double},
    {"atomic", Atomic},
    {"gemm_row_max", RowMax},
    {"reduce_cumsum", ReduceCumsum},
    {"mbarrier", Mbarrier},
};

class CompileAll
    : public ::testing::TestWithParam<std::tuple<Case, const char*>> {};

TEST_P(CompileAll, CompilesWithNvrtc) {
  auto [c, arch] = GetParam();
  absl::StatusOr<CompiledKernel> k =
      compile(c.make(), {.target = Target::cuda(arch)});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_GT(k->cubin_bytes(), 0u);
  EXPECT_THAT(k->source(), HasSubstr("__launch_bounds__"));
  EXPECT_EQ(k->arch(), arch);
}

INSTANTIATE_TEST_SUITE_P(Programs, CompileAll,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values("sm_80",
                                                              "sm_90a")),
                         [](const auto& info) {
                           std::string arch = std::get<1>(info.param);
                           return std::string(std::get<0>(info.param).name) +
                                  "_" + (arch == "sm_80" ? "sm80" : "sm90a");
                         });

// The mma.sync shape (on sm_90a this tile takes wgmma unless disabled:
// wgmma_test.cc).
TEST(Codegen, GemmHasTheProbeShape) {
  absl::StatusOr<CompiledKernel> k = compile(
      GemmBig(),
      {.target = Target::sm90a(), .pass_config = {.disable_wgmma = true}});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& s = k->source();
  EXPECT_THAT(s, HasSubstr("tl::cp_async<16>("));
  EXPECT_THAT(s, HasSubstr("tl::cp_async_wait<1>();"));
  EXPECT_THAT(s, HasSubstr("tl::ldmatrix_x4("));
  EXPECT_THAT(s, HasSubstr("tl::ldmatrix_x4_trans("));
  EXPECT_THAT(s, HasSubstr("tl::mma_m16n8k16_f16_f32((*reinterpret_cast<"
                           "float(*)[4]>(&C_local["));
  // A 64x64 warp tile: [4][8][4] declared flat.
  EXPECT_THAT(s, HasSubstr("float C_local[128];"));
  EXPECT_THAT(s, HasSubstr("tl::pack_f16x2"));
  EXPECT_THAT(s, HasSubstr("^"));  // swizzle
  EXPECT_EQ(k->shared_memory_bytes(), 3 * (256 * 64 + 64 * 128) * 2);
  // One barrier before the main loop and exactly one in it ("fragpipe":
  // the wait and barrier sit before the last k16 step, and the first
  // fragments of tile k + 1 load after them, before that step's mma).
  auto count = [&](size_t from, size_t to) {
    size_t n = 0;
    for (size_t p = s.find("__syncthreads", from); p < to;
         p = s.find("__syncthreads", p + 1))
      ++n;
    return n;
  };
  size_t loop = s.find("for (int k = 0; k < 64; ++k) {");
  size_t drain = s.find("tl::cp_async_wait<0>();");
  ASSERT_NE(loop, std::string::npos) << s;
  ASSERT_NE(drain, std::string::npos) << s;
  EXPECT_EQ(count(0, loop), 1u) << s;
  EXPECT_EQ(count(loop, drain), 1u) << s;
  EXPECT_EQ(count(drain, std::string::npos), 0u) << s;
  size_t barrier = s.find("__syncthreads", loop);
  size_t next_tile = s.find("((k + 1) % 3) * 16384", loop);
  EXPECT_LT(barrier, next_tile) << s;
  EXPECT_LT(next_tile, drain) << s;
  // 4096 is a multiple of every tile: no bounds checks on the copies.
  EXPECT_THAT(s, Not(HasSubstr("< 4096")));
}

// The unrolled epilogue's stores index one base pointer, declared before
// the nest, with constants (cuda_rebase.cc): NVVM folds no index per copy.
// Only with PassConfig::rebase_unrolled_nests, which is part of the program
// memo's key: the same program compiled without it first keeps its indices.
TEST(Codegen, UnrolledStoresIndexABasePointer) {
  const ir::Program gemm =
      testing::Gemm({.m = 4096, .n = 2048, .k = 512, .stages = 2});
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    // The plain epilogue stores (sm_90a's default stores through the TMA);
    // fast_math keeps the kernel on the CUDA printer.
    PassConfig config{.disable_tma_store_epilogue = true};
    absl::StatusOr<CompiledKernel> plain =
        compile(gemm, {.target = t, .pass_config = config, .fast_math = true});
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_THAT(plain->source(), Not(HasSubstr("C_at")));
    config.rebase_unrolled_nests = true;
    absl::StatusOr<CompiledKernel> k =
        compile(gemm, {.target = t, .pass_config = config, .fast_math = true});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string& s = k->source();
    const size_t base = s.find("auto* const C_at = &C[");
    ASSERT_NE(base, std::string::npos) << s;
    EXPECT_EQ(s.find("&C[", base + 20), std::string::npos) << s;
    const size_t nest = s.find("#pragma unroll", base);
    const size_t store = s.find("&C_at[(", base);
    EXPECT_LT(nest, store) << s;
    // The constant part only: the unrolled variables times their strides.
    const std::string index = s.substr(store, s.find(']', store) - store);
    EXPECT_EQ(index.find("tx"), std::string::npos) << index;
    EXPECT_EQ(index.find("by"), std::string::npos) << index;
  }
}

// f32 operands take the FMA loops: one k loop around the accumulator's
// unrolled elements (a k loop inside every element's copy made NVRTC take
// minutes for a 128 x 128 tile).
TEST(Codegen, FmaGemmLoopsOverKOutside) {
  const ir::Program gemm = testing::Gemm(
      {.bm = 64, .bn = 64, .bk = 32, .stages = 2, .dtype = DataType::kF32});
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(gemm, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string& s = k->source();
    // The k loop over the tile's 32 columns of A (its name may take a
    // suffix: the pipelined loop is k too), once.
    const size_t k_loop = s.find(" < 32; ++k");
    ASSERT_NE(k_loop, std::string::npos) << s;
    EXPECT_EQ(s.find(" < 32; ++k", k_loop + 1), std::string::npos) << s;
    // The element loops (and the products) follow inside it.
    const size_t element = s.find("#pragma unroll", k_loop);
    const size_t product = s.find(" * ", k_loop);
    EXPECT_LT(element, product) << s;
    EXPECT_THAT(s, Not(HasSubstr("tl::mma_")));
    EXPECT_THAT(s, Not(HasSubstr("tl::wgmma")));
  }
}

TEST(Codegen, FragmentPipelineNeedsAnEvenNumberOfK16Steps) {
  // bk = 16: one k16 step per tile, the fragments double-buffer inside the
  // tile only (no loads of tile k + 1, the barrier at the top of the loop).
  absl::StatusOr<CompiledKernel> k =
      compile(GemmK16(), {.target = Target::sm80()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), Not(HasSubstr("((k + 1) % 3)")));
  EXPECT_THAT(k->source(), HasSubstr("tl::ldmatrix_x4("));
}

TEST(Codegen, FragmentPipelineKeepsThreadSyncOff) {
  absl::StatusOr<CompiledKernel> k = compile(
      GemmDefault(),
      {.target = Target::sm80(), .pass_config = {.disable_thread_sync = true}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("((k + 1) % 3)"));
  EXPECT_THAT(k->source(), Not(HasSubstr("__syncthreads")));
}

TEST(Codegen, FragmentPipelineWithTwoStages) {
  absl::StatusOr<CompiledKernel> k = compile(
      GemmTwoStages(),
      {.target = Target::sm90a(), .pass_config = {.disable_wgmma = true}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(),
              HasSubstr("tl::cp_async_wait<0>();\n    __syncthreads();"));
  EXPECT_THAT(k->source(), HasSubstr("((k + 1) % 2)"));
}

TEST(Codegen, OddSizesArePredicated) {
  absl::StatusOr<CompiledKernel> k =
      compile(GemmOdd(), {.target = Target::sm80()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("< 333"));
  EXPECT_THAT(k->source(), HasSubstr("< 200"));
}

TEST(Codegen, DisableAsyncCopyUsesPlainLoads) {
  absl::StatusOr<CompiledKernel> k = compile(
      GemmDefault(),
      {.target = Target::sm80(), .pass_config = {.disable_async_copy = true}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), Not(HasSubstr("cp_async<")));
  EXPECT_THAT(k->source(), HasSubstr("uint4"));
}

TEST(Codegen, TooMuchSharedMemoryIsResourceExhausted) {
  absl::StatusOr<CompiledKernel> k = compile(testing::Gemm({.m = 4096,
                                                            .n = 4096,
                                                            .k = 4096,
                                                            .bm = 256,
                                                            .bn = 256,
                                                            .bk = 128,
                                                            .threads = 256,
                                                            .stages = 4}),
                                             {.target = Target::sm90a()});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(k.status().message(), HasSubstr("A_shared"));
  EXPECT_THAT(k.status().message(), HasSubstr("232448"));
}

// The CPU target runs the interpreter (tests/runtime/cpu_launch_test.cc).
TEST(Codegen, CpuTargetGeneratesNoCuda) {
  absl::StatusOr<CompiledKernel> k =
      compile(Elementwise(), {.target = Target::cpu()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->arch(), "cpu");
  EXPECT_TRUE(k->source().empty());
}

TEST(Codegen, NamesComeFromTheUsersBuffers) {
  absl::StatusOr<CompiledKernel> k =
      compile(GemmDefault(), {.target = Target::sm80()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("A_shared"));
  EXPECT_THAT(k->source(), HasSubstr("const tl::f16* __restrict__ A"));
  EXPECT_THAT(k->source(), HasSubstr("tl::f16* __restrict__ C"));
}

TEST(Codegen, KernelsSayWhereTheCacheFoundThem) {
  // A size no other test compiles: the first compile cannot be a memory hit
  // (an earlier run may have left it on disk).
  std::random_device seed;
  const int m = 64 * (1 + static_cast<int>(seed() % 4096));
  const ir::Program p = testing::Gemm({.m = m, .n = 64, .k = 64});
  absl::StatusOr<CompiledKernel> first =
      compile(p, {.target = Target::sm90a()});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(std::string(first->cache_origin()),
              ::testing::AnyOf("compiled", "disk"));
  absl::StatusOr<CompiledKernel> again =
      compile(p, {.target = Target::sm90a()});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_STREQ(again->cache_origin(), "memory");
  absl::StatusOr<CompiledKernel> cpu = compile(p, {.target = Target::cpu()});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_STREQ(cpu->cache_origin(), "none");
}

// A print message may hold any bytes: a newline or a control byte once
// ended the generated printf's literal and NVRTC failed ("a tessel bug").
TEST(Codegen, PrintMessagesWithAnyBytesCompile) {
  namespace T = tessel;
  T::ProgramBuilder p("printer");
  auto X = p.tensor("X", {4}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    T::print(X(0), std::string("a\nb\t\"q\" 100% \\ \x01\x7f caf\xc3\xa9 ") +
                       std::string(1, '\0') + "9");
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*program, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(
      k->source(),
      HasSubstr(R"(a\012b\011\"q\" 100%% \\ \001\177 caf\303\251 \\09)"));
}

// A name of megabytes crashed NVRTC (SIGSEGV): identifiers keep 200
// characters, with a hash of the whole name so that two stay apart.
TEST(Codegen, LongProgramNamesGiveShortEntries) {
  namespace T = tessel;
  auto make = [](const std::string& name) {
    T::ProgramBuilder p(name);
    auto X = p.tensor("X", {4}, T::f32);
    {
      T::Kernel kernel(1, {.threads = 32});
      X(0) = 1.0f;
    }
    return p.finish();
  };
  const std::string base(8 << 20, 'p');
  absl::StatusOr<Program> a = make(base + "a"), b = make(base + "b");
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<CompiledKernel> ka = compile(*a, {.target = Target::sm90a()});
  absl::StatusOr<CompiledKernel> kb = compile(*b, {.target = Target::sm90a()});
  ASSERT_TRUE(ka.ok()) << ka.status();
  ASSERT_TRUE(kb.ok()) << kb.status();
  EXPECT_LE(ka->entry().size(), 200u);
  EXPECT_NE(ka->entry(), kb->entry());
  EXPECT_LT(ka->source().size(), 4000u);
}

}  // namespace
}  // namespace tessel
