// The random tile programs of random_gpu_test.cc, everything but the launch
// (CI has no GPU): each builds, runs on the interpreter to a complete
// result, and lowers for sm_90a and sm_80; the first few of each kind go on
// through NVRTC. A program the CPU target runs must never be refused by the
// GPU lowering.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "jit/nvrtc.h"
#include "jit/ptx_compile.h"
#include "jit/ptx_translation.h"
#include "src/runtime/lower.h"
#include "tessel/tessel.h"
#include "tests/fuzz/fuzz_budget.h"
#include "tests/fuzz/fuzz_found_programs.h"
#include "tests/fuzz/random_staged_programs.h"
#include "tests/fuzz/random_tile_programs.h"

namespace tessel::fuzz {
namespace {

// The case's program, after the interpreter ran it on the case's arguments
// to a complete result (a failure there is reported, the program kept).
absl::StatusOr<Program> BuildAndInterpret(const seed_test::SeedCase& c) {
  absl::StatusOr<Program> program = c.make();
  if (!program.ok()) return program.status();
  absl::StatusOr<std::vector<HostTensor>> arguments =
      seed_test::InitialArguments(c);
  if (!arguments.ok()) return arguments.status();
  absl::Status ran = seed_test::InterpretInPlace(*program, *arguments);
  EXPECT_TRUE(ran.ok()) << ran;
  return program;
}

TEST(RandomTilePrograms, InterpretAndLowerForEveryGpuArch) {
  int nvrtc_gemm = 0, nvrtc_rows = 0;
  for (const seed_test::SeedCase& c :
       RandomTileCases(FuzzSeed(), 48 * FuzzBudget::Scale())) {
    SCOPED_TRACE(c.name + ": " + c.description);
    absl::StatusOr<Program> program = BuildAndInterpret(c);
    ASSERT_TRUE(program.ok()) << program.status();
    const bool gemm = c.description.rfind("gemm", 0) == 0;
    int& compiled = gemm ? nvrtc_gemm : nvrtc_rows;
    for (Target target : {Target::sm90a(), Target::sm80()}) {
      absl::StatusOr<runtime::Lowered> lowered =
          runtime::Lower(program->ir(), {.target = target});
      ASSERT_TRUE(lowered.ok()) << target.arch() << ": " << lowered.status();
      // NVRTC takes ~0.5 s a kernel here: two of each kind and arch.
      if (compiled >= 4) continue;
      ++compiled;
      absl::StatusOr<jit::Cubin> cubin =
          jit::Compile(lowered->generated.source, lowered->jit_options);
      EXPECT_TRUE(cubin.ok()) << target.arch() << ": " << cubin.status();
    }
  }
  EXPECT_EQ(nvrtc_gemm, 4);
  EXPECT_EQ(nvrtc_rows, 4);
}

// The staged element-wise programs (random_staged_programs.h) the same way,
// each through the PTX emitter where it spells it (else NVRTC) for the
// first few: the compile a user's would take.
TEST(RandomStagedPrograms, InterpretAndLowerForEveryGpuArch) {
  int compiled = 0;
  for (const seed_test::SeedCase& c :
       RandomStagedCases(FuzzSeed(), 32 * FuzzBudget::Scale())) {
    SCOPED_TRACE(c.name + ": " + c.description);
    absl::StatusOr<Program> program = BuildAndInterpret(c);
    ASSERT_TRUE(program.ok()) << program.status();
    for (Target target : {Target::sm90a(), Target::sm80()}) {
      absl::StatusOr<runtime::Lowered> lowered =
          runtime::Lower(program->ir(), {.target = target, .direct_ptx = true});
      EXPECT_TRUE(lowered.ok()) << target.arch() << ": " << lowered.status();
      if (!lowered.ok() || compiled >= 6) continue;
      ++compiled;
      absl::StatusOr<jit::CompileInput> input = jit::ChooseCompileInput(
          lowered->generated.source, lowered->jit_options);
      ASSERT_TRUE(input.ok()) << target.arch() << ": " << input.status();
      absl::StatusOr<jit::Cubin> cubin =
          jit::Compile(input->source, input->options);
      EXPECT_TRUE(cubin.ok()) << target.arch() << ": " << cubin.status();
    }
  }
  EXPECT_EQ(compiled, 6);
}

// The PTX emitter (CompileOptions::direct_ptx) on every random program:
// it spells the kernel in PTX that ptxas assembles, or declines with an
// Unimplemented "ptx: ..." reason (the kernel then goes to NVRTC); any
// other error would fail a user's compile. (A ptxas that refuses the PTX
// also falls back to NVRTC, but that is a translator bug: caught here.)
TEST(RandomTilePrograms, PtxEmitterSpellsEveryProgramOrSaysWhy) {
  if (!jit::PtxasAvailable()) GTEST_SKIP() << "no ptxas in this toolkit";
  int spelled = 0;
  for (const seed_test::SeedCase& c :
       RandomTileCases(FuzzSeed(), 48 * FuzzBudget::Scale())) {
    SCOPED_TRACE(c.name + ": " + c.description);
    absl::StatusOr<Program> program = c.make();
    ASSERT_TRUE(program.ok()) << program.status();
    for (Target target : {Target::sm90a(), Target::sm80()}) {
      absl::StatusOr<runtime::Lowered> lowered =
          runtime::Lower(program->ir(), {.target = target, .direct_ptx = true});
      ASSERT_TRUE(lowered.ok()) << target.arch() << ": " << lowered.status();
      absl::StatusOr<jit::CompileInput> input = jit::ChooseCompileInput(
          lowered->generated.source, lowered->jit_options);
      ASSERT_TRUE(input.ok()) << target.arch() << ": " << input.status();
      if (input->source.language != jit::SourceLanguage::kPtx) {
        EXPECT_TRUE(absl::StartsWith(input->ptx_fallback, "ptx: "))
            << input->ptx_fallback;
        continue;
      }
      ++spelled;
      absl::StatusOr<jit::Cubin> cubin =
          jit::Compile(input->source, input->options);
      EXPECT_TRUE(cubin.ok()) << target.arch() << ": ptxas: " << cubin.status();
    }
  }
  EXPECT_GT(spelled, 0);  // the emitter is not declining everything
}

// The programs the broader fuzz found refused (fuzz_found_programs.h):
// each runs on the interpreter and goes through NVRTC for both archs.
TEST(RandomTilePrograms, FuzzFoundProgramsCompileForEveryGpuArch) {
  for (const seed_test::SeedCase& c : FuzzFoundCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Program> program = c.make();
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<std::vector<HostTensor>> arguments =
        seed_test::InitialArguments(c);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    EXPECT_TRUE(seed_test::InterpretInPlace(*program, *arguments).ok());
    for (Target target : {Target::sm90a(), Target::sm80()}) {
      absl::StatusOr<runtime::Lowered> lowered =
          runtime::Lower(program->ir(), {.target = target});
      ASSERT_TRUE(lowered.ok()) << target.arch() << ": " << lowered.status();
      absl::StatusOr<jit::Cubin> cubin =
          jit::Compile(lowered->generated.source, lowered->jit_options);
      EXPECT_TRUE(cubin.ok()) << target.arch() << ": " << cubin.status();
    }
  }
}

}  // namespace
}  // namespace tessel::fuzz
