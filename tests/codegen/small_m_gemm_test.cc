// Small-M gemms on the tensor cores (src/passes/small_m_gemm.h), compiled
// for sm_90a and sm_80 (no GPU needed; NVRTC and the PTX path both): the
// schedule line of each M names the instruction and the padding, A's rows
// are clamped in the ldmatrix, the decode block's two gemms and its row
// statistics stay on the tensor cores, and gemms left on FMA loops say why
// in the user's terms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessel/compile.h"
#include "tests/codegen/small_m_cases.h"

namespace tessel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Compiled {
  std::string schedule;
  std::string cuda;
};

Compiled CompileFor(const absl::StatusOr<Program>& p, const Target& target,
                    bool direct_ptx = true) {
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = target, .direct_ptx = direct_ptx});
  EXPECT_TRUE(k.ok()) << p->name() << " for " << target.arch() << ": "
                      << k.status();
  if (!k.ok()) return {};
  return {absl::StrJoin(k->schedule(), "\n"), k->source()};
}

// The schedule line of C [m, 64] += A [m, 64] * B, 128 threads.
std::string Golden(int m, bool transpose_b, bool hopper) {
  const std::string b =
      hopper
          ? absl::StrCat("B descriptor (", transpose_b ? "K" : "MN", "-major)")
          : "B ldmatrix";
  return absl::StrCat("gemm acc += A_shared * B_shared: ",
                      hopper ? "wgmma" : "mma.sync", " (M = ", m,
                      " padded to 64 rows), warps 4x1, warp tile 16x64 (1x8 "
                      "tiles), 4 k16 steps, A ldmatrix, ",
                      b);
}

TEST(SmallMGemm, SchedulesNameTheTensorCoresAndThePadding) {
  for (int m : {1, 4, 8, 16, 32}) {
    for (bool tb : {false, true}) {
      const SmallMCase c{.m = m, .transpose_b = tb};
      Compiled h = CompileFor(SmallMGemmProgram(c), Target::sm90a());
      EXPECT_EQ(h.schedule, Golden(m, tb, true));
      EXPECT_THAT(h.cuda, HasSubstr("tl::wgmma_fence"));
      // Rows past M read row M - 1.
      EXPECT_THAT(h.cuda, HasSubstr(absl::StrCat(", ", m - 1, ")")));
      Compiled a = CompileFor(SmallMGemmProgram(c), Target::cuda("sm_80"));
      EXPECT_EQ(a.schedule, Golden(m, tb, false));
      EXPECT_THAT(a.cuda, HasSubstr("tl::mma"));
      EXPECT_THAT(a.cuda, Not(HasSubstr("tl::wgmma_fence")));
    }
  }
}

TEST(SmallMGemm, Bf16AndNvrtcCompileForBothArchs) {
  for (int m : {1, 4, 16}) {
    const SmallMCase c{.m = m, .transpose_b = m == 4, .dtype = DataType::kBF16};
    for (const Target& t : {Target::sm90a(), Target::cuda("sm_80")}) {
      Compiled k = CompileFor(SmallMGemmProgram(c), t, /*direct_ptx=*/false);
      EXPECT_THAT(k.schedule,
                  HasSubstr(absl::StrCat("(M = ", m, " padded to 64 rows)")));
    }
  }
}

TEST(SmallMGemm, DecodeBlockStaysOnTheTensorCores) {
  for (int m : {4, 8, 16}) {
    const SmallMCase c{.m = m};
    for (const Target& t : {Target::sm90a(), Target::cuda("sm_80")}) {
      const bool hopper = t.arch() == "sm_90a";
      Compiled k = CompileFor(SmallMDecodeProgram(c), t, /*direct_ptx=*/false);
      const std::string what = hopper ? ": wgmma (M = " : ": mma.sync (M = ";
      EXPECT_EQ(
          k.schedule,
          absl::StrCat(
              "gemm scores += Q_shared * K_shared", what, m,
              " padded to 64 rows), warps 4x1, warp tile 16x64 "
              "(1x8 tiles), 8 k16 steps, A ldmatrix, B ",
              hopper ? "descriptor (K-major, atoms 8192 B apart)" : "ldmatrix",
              "\ngemm acc_o += probs * V_shared", what, m,
              " padded to 64 rows), warps 4x1, warp tile 16x128 "
              "(1x16 tiles), 4 k16 steps, A registers, B ",
              hopper ? "descriptor (MN-major, atoms 8192 B apart)"
                     : "ldmatrix"));
      // The row statistics reduce in registers and shuffles: no scratch.
      EXPECT_THAT(k.cuda, HasSubstr("warp_reduce"));
      EXPECT_THAT(k.cuda, Not(HasSubstr("red_scratch")));
    }
  }
}

TEST(SmallMGemm, FmaLoopsSayWhyInTheUsersTerms) {
  auto schedule = [](const SmallMCase& c) {
    return CompileFor(SmallMGemmProgram(c), Target::sm90a()).schedule;
  };
  std::string narrow = schedule({.m = 4, .n = 8});
  EXPECT_THAT(narrow, HasSubstr("fma (no tensor cores: N = 8 is not a "
                                "multiple of 16"));
  EXPECT_THAT(narrow, Not(HasSubstr("no tensor-core path for")));
  EXPECT_THAT(schedule({.m = 4, .n = 64, .k = 48}),
              HasSubstr("K = 24 is not a multiple of 16"));
  // f32 operands: the dtypes are the reason.
  EXPECT_THAT(schedule({.m = 4, .dtype = DataType::kF32}),
              HasSubstr("A and B are f32 and f32; small-M tiles (M = 4) take "
                        "the tensor cores for f16 or bf16 only: FMA loops"));
}

}  // namespace
}  // namespace tessel::testing
