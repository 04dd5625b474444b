// The occupancy ptxas is asked for (jit/occupancy_fit.h): the calculator's
// arithmetic, when a second compile is worth it, the directive it adds, and
// real ptxas compiles that keep the second cubin only when it has the blocks
// and no spills. No GPU needed.
#include "jit/occupancy_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "jit/ptx_compile.h"
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
  absl::StatusOr<Cubin> fitted =
      CompileFitted(input, [&](const CompileInput& in) {
        ++compiles;
        return Compile(in.source, in.options);
      });
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  const Cubin& cubin = *fitted;
  std::optional<CubinResources> after =
      ResourcesOf(cubin.image, cubin.lowered_entry);
  ASSERT_TRUE(after.has_value());
  if (before->registers <= 32) {  // another ptxas: nothing to ask for
    EXPECT_EQ(compiles, 1);
    EXPECT_TRUE(cubin.image == first->image);
    return;
  }
  EXPECT_EQ(compiles, 2);
  EXPECT_LE(after->registers, 32);
  EXPECT_EQ(after->frame_bytes, 0);
  EXPECT_THAT(input.source.text,
              HasSubstr(".maxntid 512, 1, 1\n.minnctapersm 4\n"));
  EXPECT_THAT(cubin.log,
              HasSubstr(absl::StrCat("compiled again with .minnctapersm 4: ",
                                     before->registers, " -> ")));
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
    absl::StatusOr<Cubin> fitted =
        CompileFitted(input, [&](const CompileInput& in) {
          return in.source.text == wide.source.text ? first : second;
        });
    ASSERT_TRUE(fitted.ok()) << fitted.status();
    EXPECT_TRUE(fitted->image == first->image);
    EXPECT_EQ(input.source.text, wide.source.text);
  }
  // Nothing more is asked of a CUDA source, or of a launch not known; the
  // first compile's error is returned.
  int compiles = 0;
  auto count = [&](const CompileInput&) {
    ++compiles;
    return first;
  };
  CompileInput unknown = wide;
  unknown.launch = {};
  EXPECT_TRUE(CompileFitted(unknown, count).ok());
  CompileInput cuda = wide;
  cuda.source.language = SourceLanguage::kCuda;
  EXPECT_TRUE(CompileFitted(cuda, count).ok());
  EXPECT_EQ(compiles, 2);
  CompileInput failing = wide;
  EXPECT_THAT(CompileFitted(failing,
                            [](const CompileInput&) -> absl::StatusOr<Cubin> {
                              return absl::InvalidArgumentError("bad PTX");
                            })
                  .status()
                  .message(),
              HasSubstr("bad PTX"));
}

// Step 1: the spelling with more registers is compiled beside the first
// and kept when it has no stack and loses no block per SM.
TEST(OccupancyFitTest, TheSpellingWithMoreRegistersWhenItCostsNothing) {
  if (!PtxasAvailable()) GTEST_SKIP() << "no ptxas";
  std::atomic<int> spelled = 0, compiles = 0;
  // A `more_registers` that spells `text` (entry "add1"), counted.
  auto spelling = [&spelled](std::string text) {
    return [&spelled, text]() -> absl::StatusOr<PtxModule> {
      ++spelled;
      return PtxModule{.text = text, .entry = "add1"};
    };
  };
  auto compile = [&compiles](const CompileInput& in) {
    ++compiles;
    return Compile(in.source, in.options);
  };
  // add1 at 128 threads, and the same with a comment: as good, kept.
  const CompileInput add1{.source = testing::Add1Ptx(),
                          .options = {.arch = "sm_90a"},
                          .launch = {.threads = 128}};
  const std::string also = "// another spelling\n" + add1.source.text;
  CompileInput input = add1;
  input.more_registers = spelling(also);
  absl::StatusOr<Cubin> cubin = CompileFitted(input, compile);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(spelled, 1);
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(input.source.text, also);
  EXPECT_THAT(cubin->log,
              HasSubstr("tessel: the spelling with more registers: "));
  EXPECT_FALSE(input.more_registers);

  // One that costs blocks per SM is not kept: wide's 34 registers fit 12
  // blocks of 128 threads, add1's 16. Nor one with stack.
  std::string wide = absl::StrReplaceAll(WideLoads().source.text,
                                         {{"entry wide", "entry add1"}});
  std::string stacked = absl::StrReplaceAll(WithStack(WideLoads()).source.text,
                                            {{"entry wide", "entry add1"}});
  for (const std::string& text : {wide, stacked}) {
    input = add1;
    input.more_registers = spelling(text);
    cubin = CompileFitted(input, compile);
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    EXPECT_EQ(input.source.text, add1.source.text);
    EXPECT_THAT(cubin->log, ::testing::Not(HasSubstr("more registers")));
  }
  // The same text is not compiled twice.
  compiles = 0;
  input = add1;
  input.more_registers = spelling(add1.source.text);
  ASSERT_TRUE(CompileFitted(input, compile).ok());
  EXPECT_EQ(compiles, 1);
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
