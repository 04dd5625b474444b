// The occupancy ptxas is asked for (jit/occupancy_fit.h): the calculator's
// arithmetic, when a second compile is worth it, the directive it adds, and
// real ptxas compiles that keep the second cubin only when it has the blocks
// and no spills. No GPU needed.
#include "jit/occupancy_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "jit/ptx_compile.h"
#include "tests/common/count.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(OccupancyFitTest, BlocksPerSmAsTheCalculatorCountsThem) {
  const LaunchShape rows{.threads = 512, .shared_bytes = 64};
  EXPECT_EQ(BlocksPerSm("sm_90a", rows, 40), 3);  // 1280 registers a warp
  EXPECT_EQ(BlocksPerSm("sm_90a", rows, 32), 4);  // 2048 threads: the most
  EXPECT_EQ(BlocksPerSm("sm_90a", rows, 33), 3);  // 40 after rounding
  EXPECT_EQ(BlocksPerSm("sm_80", rows, 32), 4);
  EXPECT_EQ(BlocksPerSm("sm_86", rows, 32), 3);  // 1536 threads
  const LaunchShape norm{.threads = 256, .shared_bytes = 1024};
  EXPECT_EQ(BlocksPerSm("sm_90a", norm, 70), 3);
  EXPECT_EQ(BlocksPerSm("sm_90a", norm, 64), 4);
  EXPECT_EQ(BlocksPerSm("sm_90a", norm, 255), 1);
  // Shared memory: 228 KB an SM, 1 KB more per block.
  EXPECT_EQ(
      BlocksPerSm("sm_90a", {.threads = 128, .shared_bytes = 100 << 10}, 32),
      2);
  EXPECT_EQ(
      BlocksPerSm("sm_80", {.threads = 128, .shared_bytes = 100 << 10}, 32), 1);
  // Not guessed: archs this does not know, launches that cannot be.
  EXPECT_EQ(BlocksPerSm("sm_120", rows, 32), 0);
  EXPECT_EQ(BlocksPerSm("compute_90", rows, 32), 0);
  EXPECT_EQ(BlocksPerSm("sm_90a", {.threads = 0}, 32), 0);
  EXPECT_EQ(BlocksPerSm("sm_90a", {.threads = 2048}, 32), 0);
  EXPECT_EQ(
      BlocksPerSm("sm_90a", {.threads = 128, .shared_bytes = 1 << 20}, 32), 0);
}

TEST(OccupancyFitTest, AsksOnlyWhereAFifthFewerRegistersFitMoreBlocks) {
  const LaunchShape rows{.threads = 512};
  EXPECT_THAT(BlocksWorthAsking("sm_90a", rows, 40), Optional(4));
  EXPECT_THAT(BlocksWorthAsking("sm_90a", rows, 41), Optional(3));  // 2 now
  EXPECT_EQ(BlocksWorthAsking("sm_90a", rows, 56), std::nullopt);   // 40/56
  EXPECT_EQ(BlocksWorthAsking("sm_90a", rows, 32), std::nullopt);   // full
  const LaunchShape norm{.threads = 256};
  EXPECT_THAT(BlocksWorthAsking("sm_90a", norm, 70), Optional(4));
  EXPECT_EQ(BlocksWorthAsking("sm_90a", norm, 167), std::nullopt);
  // Shared memory allows no more: registers are not the limit.
  EXPECT_EQ(
      BlocksWorthAsking("sm_90a", {.threads = 256, .shared_bytes = 80000}, 70),
      std::nullopt);
  EXPECT_EQ(BlocksWorthAsking("sm_120", rows, 40), std::nullopt);
  // Small blocks: the most blocks within a fifth.
  EXPECT_THAT(BlocksWorthAsking("sm_90a", {.threads = 128}, 40), Optional(16));
}

TEST(OccupancyFitTest, TheDirectiveFollowsMaxntid) {
  const std::string ptx =
      ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.maxntid 256, 1, 1\n{\n"
      "\tret;\n}\n";
  EXPECT_THAT(WithMinBlocksPerSm(ptx, 4),
              Optional(absl::StrReplaceAll(
                  ptx, {{".maxntid 256, 1, 1\n",
                         ".maxntid 256, 1, 1\n.minnctapersm 4\n"}})));
  // Kernels that budget their own registers, or give no block size.
  for (absl::string_view own : {".maxnreg 64\n", ".minnctapersm 1\n",
                                "\tsetmaxnreg.inc.sync.aligned.u32 240;\n"}) {
    std::string with = ptx;
    with.insert(with.find("{\n") + 2, std::string(own));
    EXPECT_EQ(WithMinBlocksPerSm(with, 4), std::nullopt) << own;
  }
  EXPECT_EQ(WithMinBlocksPerSm(".visible .entry k()\n{\n\tret;\n}\n", 4),
            std::nullopt);
}

// A kernel of 512 threads that loads 36 floats before it multiplies them:
// ptxas 13.0 gives it 34 registers (3 blocks an SM) unless asked for 4.
CompileInput WideLoads() {
  std::string ptx =
      ".version 8.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry wide(.param .u64 x)\n.maxntid 512, 1, 1\n{\n"
      "\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<200>;\n\t.reg .b32 %r<4>;\n"
      "\tld.param.u64 %rd1, [x];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
      "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 16;\n"
      "\tadd.s64 %rd2, %rd2, %rd3;\n";
  constexpr int kVectors = 9;
  for (int i = 0; i < kVectors; ++i) {
    absl::StrAppend(&ptx, "\tld.global.v4.f32 {%f", 4 * i, ", %f", 4 * i + 1,
                    ", %f", 4 * i + 2, ", %f", 4 * i + 3, "}, [%rd2+", i * 8192,
                    "];\n");
  }
  absl::StrAppend(&ptx, "\tmov.f32 %f100, 0f00000000;\n");
  for (int i = 0; i < 2 * kVectors; ++i) {
    absl::StrAppend(&ptx, "\tfma.rn.f32 %f", 101 + i, ", %f", i, ", %f",
                    4 * kVectors - 1 - i, ", %f", 100 + i, ";\n");
  }
  absl::StrAppend(&ptx, "\tst.global.f32 [%rd2], %f", 100 + 2 * kVectors,
                  ";\n\tret;\n}\n");
  return CompileInput{.source = {.text = ptx,
                                 .entry = "wide",
                                 .language = SourceLanguage::kPtx},
                      .options = {.arch = "sm_90a"},
                      .launch = {.threads = 512, .shared_bytes = 0}};
}

// `input` with a local array indexed by the thread: stack, as spills leave.
CompileInput WithStack(const CompileInput& input) {
  CompileInput stacked = input;
  stacked.source.text = absl::StrReplaceAll(
      input.source.text,
      {{"\t.reg .b64 %rd<4>;\n",
        "\t.reg .b64 %rd<4>;\n\t.reg .b64 %rl<4>;\n"
        "\t.local .align 4 .b8 buf[64];\n"},
       {"\tret;\n",
        "\tmov.u64 %rl1, buf;\n\tand.b32 %r2, %r1, 3;\n"
        "\tmul.wide.u32 %rl2, %r2, 4;\n\tadd.s64 %rl3, %rl1, %rl2;\n"
        "\tst.local.f32 [%rl3], %f7;\n\tadd.s32 %r3, %r1, 1;\n"
        "\tand.b32 %r3, %r3, 3;\n\tmul.wide.u32 %rl2, %r3, 4;\n"
        "\tadd.s64 %rl3, %rl1, %rl2;\n\tld.local.f32 %f199, [%rl3];\n"
        "\tst.global.f32 [%rd2+4], %f199;\n\tret;\n"}});
  return stacked;
}

TEST(OccupancyFitTest, KeepsTheSecondCubinWhenItHasTheBlocks) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  CompileInput input = WideLoads();
  absl::StatusOr<Cubin> first = Compile(input.source, input.options);
  ASSERT_TRUE(first.ok()) << first.status();
  std::optional<CubinResources> before = ResourcesOf(first->image, "wide");
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->frame_bytes, 0);
  int compiles = 0;
  Cubin cubin = *first;
  FitOccupancy(input, cubin, [&](const CompileInput& in) {
    ++compiles;
    return Compile(in.source, in.options);
  });
  std::optional<CubinResources> after =
      ResourcesOf(cubin.image, cubin.lowered_entry);
  ASSERT_TRUE(after.has_value());
  if (before->registers <= 32) {  // another ptxas: nothing to ask for
    EXPECT_EQ(compiles, 0);
    EXPECT_TRUE(cubin.image == first->image);
    return;
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_LE(after->registers, 32);
  EXPECT_EQ(after->frame_bytes, 0);
  EXPECT_THAT(input.source.text,
              HasSubstr(".maxntid 512, 1, 1\n.minnctapersm 4\n"));
  EXPECT_THAT(cubin.log,
              HasSubstr(absl::StrCat("compiled again with .minnctapersm 4: ",
                                     before->registers, " -> ")));
  EXPECT_GE(cubin.compile_ms, first->compile_ms);
}

TEST(OccupancyFitTest, KeepsTheFirstCubinWhenTheSecondSpillsOrFails) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  const CompileInput wide = WideLoads();
  absl::StatusOr<Cubin> first = Compile(wide.source, wide.options);
  ASSERT_TRUE(first.ok()) << first.status();
  std::optional<CubinResources> before = ResourcesOf(first->image, "wide");
  ASSERT_TRUE(before.has_value());
  if (before->registers <= 32) GTEST_SKIP() << "ptxas fits it at once";
  // A second cubin with stack (a local array), as spills would leave.
  const CompileInput stacked = WithStack(wide);
  absl::StatusOr<Cubin> with_stack = Compile(stacked.source, stacked.options);
  ASSERT_TRUE(with_stack.ok()) << with_stack.status();
  for (absl::StatusOr<Cubin> second :
       {with_stack, absl::StatusOr<Cubin>(absl::InternalError("ptxas died"))}) {
    CompileInput input = wide;
    Cubin cubin = *first;
    FitOccupancy(input, cubin, [&](const CompileInput&) { return second; });
    EXPECT_TRUE(cubin.image == first->image);
    EXPECT_EQ(input.source.text, wide.source.text);
  }
  // Nothing is asked of a CUDA source, or of a launch not known.
  int compiles = 0;
  auto count = [&](const CompileInput& in) {
    ++compiles;
    return Compile(in.source, in.options);
  };
  CompileInput unknown = wide;
  unknown.launch = {};
  Cubin cubin = *first;
  FitOccupancy(unknown, cubin, count);
  CompileInput cuda = wide;
  cuda.source.language = SourceLanguage::kCuda;
  FitOccupancy(cuda, cubin, count);
  EXPECT_EQ(compiles, 0);
}

// Step 1: a cubin that spills is compiled again from the spelling with
// fewer registers, which is kept when it has less stack.
TEST(OccupancyFitTest, TheSpellingWithFewerRegistersReplacesOneThatSpills) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  const CompileInput wide = WideLoads();
  int spelled = 0;
  // A `fewer_registers` that spells `lean`, counted.
  auto spelling = [&spelled](const CompileInput& lean) {
    return [&spelled, lean]() -> absl::StatusOr<PtxModule> {
      ++spelled;
      return PtxModule{.text = lean.source.text, .entry = lean.source.entry};
    };
  };
  auto compile = [](const CompileInput& in) {
    return Compile(in.source, in.options);
  };
  CompileInput input = WithStack(wide);
  input.fewer_registers = spelling(wide);
  absl::StatusOr<Cubin> first = Compile(input.source, input.options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT(ResourcesOf(first->image, "wide")->frame_bytes, 0);
  Cubin cubin = *first;
  FitOccupancy(input, cubin, compile);
  EXPECT_EQ(spelled, 1);
  EXPECT_EQ(ResourcesOf(cubin.image, "wide")->frame_bytes, 0);
  EXPECT_THAT(input.source.text, ::testing::Not(HasSubstr(".local")));
  EXPECT_THAT(cubin.log,
              HasSubstr("tessel: a spelling with fewer registers: "));
  EXPECT_FALSE(input.fewer_registers);

  // A spelling that spills as much is not kept; none is asked of a kernel
  // that neither spills nor is held back by its registers.
  CompileInput lean = WithStack(wide);
  lean.source.text = "// the lean one\n" + lean.source.text;
  const CompileInput small{.source = testing::Add1Ptx(),
                           .options = {.arch = "sm_90a"},
                           .launch = {.threads = 128}};
  for (const bool spills : {true, false}) {
    spelled = 0;
    CompileInput again = spills ? WithStack(wide) : small;
    again.fewer_registers = spelling(lean);
    absl::StatusOr<Cubin> start = Compile(again.source, again.options);
    ASSERT_TRUE(start.ok()) << start.status();
    Cubin kept = *start;
    FitOccupancy(again, kept, compile);
    EXPECT_EQ(spelled, spills ? 1 : 0);
    EXPECT_THAT(again.source.text,
                ::testing::Not(HasSubstr("// the lean one")));
    EXPECT_THAT(kept.log, ::testing::Not(HasSubstr("fewer registers")));
    if (!spills) EXPECT_TRUE(kept.image == start->image);
  }
}

// A spelling may offer the next: each is compiled while the kept one still
// spills, and each that is better is kept, its note added to the log.
TEST(OccupancyFitTest, SpellingsFollowOneAnotherWhileTheyAreBetter) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  const CompileInput wide = WideLoads();
  // Stack of 64, then 16, then none.
  auto stacked = [&](int bytes) {
    CompileInput in = WithStack(wide);
    in.source.text = absl::StrReplaceAll(
        in.source.text, {{"buf[64]", absl::StrCat("buf[", bytes, "]")}});
    return in;
  };
  int spelled = 0;
  std::function<absl::StatusOr<PtxModule>()> none = [&] {
    ++spelled;
    return PtxModule{.text = wide.source.text, .entry = "wide"};
  };
  std::function<absl::StatusOr<PtxModule>()> less = [&] {
    ++spelled;
    return PtxModule{.text = stacked(16).source.text,
                     .entry = "wide",
                     .fewer_registers = none};
  };
  CompileInput input = stacked(64);
  input.fewer_registers = less;
  absl::StatusOr<Cubin> first = Compile(input.source, input.options);
  ASSERT_TRUE(first.ok()) << first.status();
  Cubin cubin = *first;
  FitOccupancy(input, cubin, [](const CompileInput& in) {
    return Compile(in.source, in.options);
  });
  EXPECT_EQ(spelled, 2);
  EXPECT_EQ(ResourcesOf(cubin.image, "wide")->frame_bytes, 0);
  EXPECT_EQ(tessel::testing::Count(cubin.log,
                                   "tessel: a spelling with fewer registers"),
            2)
      << cubin.log;
}

TEST(OccupancyFitTest, ResourcesOfReadsPtxassCubinAndNothingElse) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  absl::StatusOr<Cubin> add1 = Compile(testing::Add1Ptx(), {.arch = "sm_90a"});
  ASSERT_TRUE(add1.ok()) << add1.status();
  std::optional<CubinResources> resources = ResourcesOf(add1->image, "add1");
  ASSERT_TRUE(resources.has_value());
  EXPECT_GT(resources->registers, 0);
  EXPECT_LT(resources->registers, 32);
  EXPECT_EQ(resources->frame_bytes, 0);
  EXPECT_EQ(ResourcesOf(add1->image, "other"), std::nullopt);
  EXPECT_EQ(ResourcesOf("not an elf", "add1"), std::nullopt);
  for (size_t size : {0, 16, 64, 200}) {
    EXPECT_EQ(ResourcesOf(add1->image.substr(0, size), "add1"), std::nullopt)
        << size;
  }
}

}  // namespace
}  // namespace tessel::jit
