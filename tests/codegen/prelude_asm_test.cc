// One spelling per instruction: the PTX emitter spells the instructions the
// prelude holds from the prelude's own inline asm (src/codegen/prelude_asm.h),
// so a spelling changed in a prelude file reaches both backends: the CUDA
// kernels NVRTC compiles with the prelude, and the PTX the emitter writes.
// NVRTC and ptxas run without a GPU.
#include "src/codegen/prelude_asm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "jit/nvrtc.h"
#include "src/codegen/prelude.h"
#include "src/codegen/ptx/ptx_codegen.h"
#include "src/runtime/lower.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

using codegen::PreludeAsm;

constexpr char kTryWait[] = "mbarrier.try_wait.parity.shared::cta.b64";
constexpr char kPlanted[] = "mbarrier.try_wait.planted.parity.shared::cta.b64";

std::vector<PreludeAsm::File> Files(const std::vector<jit::CudaHeader>& hs) {
  std::vector<PreludeAsm::File> files;
  for (const jit::CudaHeader& h : hs) files.push_back({h.name, h.content});
  return files;
}

// `headers` with the sm_90 poll of mbarrier.cuh spelled kPlanted.
std::vector<jit::CudaHeader> Planted(std::vector<jit::CudaHeader> headers) {
  int changed = 0;
  for (jit::CudaHeader& h : headers) {
    if (h.name != "mbarrier.cuh") continue;
    changed = absl::StrReplaceAll({{kTryWait, kPlanted}}, &h.content);
  }
  EXPECT_EQ(changed, 1);
  return headers;
}

absl::StatusOr<PreludeAsm> Parse(const std::string& name,
                                 const std::string& text, int arch = 90) {
  return PreludeAsm::Parse({{name, text}}, arch);
}

TEST(PreludeAsm, TheArchGuardChoosesTheSpelling) {
  const std::vector<std::string> at = {"", "%r1", "%r2"};
  const std::vector<std::string> sm90 = PreludeAsm::Embedded(90).Spell(
      "mbarrier_test_parity", at, {{"p", "%p1"}});
  const std::vector<std::string> sm80 = PreludeAsm::Embedded(80).Spell(
      "mbarrier_test_parity", at, {{"p", "%p1"}});
  ASSERT_EQ(sm90.size(), 2u);  // the poll and the selp into %0
  EXPECT_EQ(sm90[0], absl::StrCat(kTryWait, " %p1, [%r1], %r2;"));
  EXPECT_EQ(sm90[1], "selp.u32 , 1, 0, %p1;");
  ASSERT_EQ(sm80.size(), 2u);
  EXPECT_EQ(sm80[0], "mbarrier.test_wait.parity.shared.b64 %p1, [%r1], %r2;");
  // sm_90 only: fence_barrier_init is empty before, tma_load absent.
  EXPECT_EQ(PreludeAsm::Embedded(90).Spell("fence_barrier_init", {}).size(),
            1u);
  EXPECT_TRUE(PreludeAsm::Embedded(80).Spell("fence_barrier_init", {}).empty());
  EXPECT_TRUE(PreludeAsm::Embedded(80)
                  .Spell("tma_load", {"a", "m", "b", "x", "y"})
                  .empty());
}

TEST(PreludeAsm, OverloadsAreTheirOperandCounts) {
  const PreludeAsm& sm90 = PreludeAsm::Embedded(90);
  const std::vector<std::string> load_2d =
      sm90.Spell("tma_load", {"%r1", "%rd2", "%r3", "%r4", "%r5"});
  ASSERT_EQ(load_2d.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(load_2d[0], "cp.async.bulk.tensor.2d."));
  EXPECT_TRUE(absl::EndsWith(load_2d[0], " [%r1], [%rd2, {%r4, %r5}], [%r3];"));
  EXPECT_EQ(sm90.Spell("tma_load", {"a", "m", "b", "x", "y", "z"}).size(), 1u);
  // cp_async<16>'s .cg asm names three operands, cp_async<4 or 8>'s .ca four.
  EXPECT_EQ(sm90.Spell("cp_async", {"%r1", "%rd2", "%r3"}),
            std::vector<std::string>{
                "cp.async.cg.shared.global [%r1], [%rd2], 16, %r3;"});
  EXPECT_EQ(sm90.Spell("cp_async", {"%r1", "%rd2", "8", "%r3"}),
            std::vector<std::string>{
                "cp.async.ca.shared.global [%r1], [%rd2], 8, %r3;"});
  EXPECT_EQ(sm90.Opcode("exp2_approx"), "ex2.approx.ftz.f32");
  EXPECT_EQ(sm90.Opcode("pack_bf16x2"), "cvt.rn.bf16x2.f32");
  EXPECT_EQ(sm90.Opcode("mbarrier_test_parity"), "");  // not one instruction
  // %% is a %; names of registers the asm does not declare stay.
  EXPECT_EQ(sm90.Spell("cluster_block_rank", {"%r9"}),
            std::vector<std::string>{"mov.u32 %r9, %cluster_ctarank;"});
}

TEST(PreludeAsm, WhatItCannotDecideIsAnError) {
  EXPECT_FALSE(Parse("a.cuh", "#if FOO\n#endif\n").ok());
  EXPECT_FALSE(Parse("a.cuh", "#if __CUDA_ARCH__ >= 900\n").ok());
  // Two asm statements of one function and operand count, spelled apart.
  EXPECT_FALSE(Parse("a.cuh",
                     "__device__ __forceinline__ void f(int x) {\n"
                     "  asm volatile(\"a.b %0;\\n\" :: \"r\"(x));\n"
                     "  asm volatile(\"a.c %0;\\n\" :: \"r\"(x));\n"
                     "}\n")
                   .ok());
  absl::StatusOr<PreludeAsm> same =
      Parse("a.cuh",
            "// asm(\"not.this;\")\n"
            "__device__ __forceinline__ void f(int x) {\n"
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
            "  asm volatile(\"a.b \"\n"
            "               \"%0;\\n\" :: \"r\"(x));\n"
            "#else\n"
            "  asm volatile(\"a.c %0;\\n\" :: \"r\"(x));\n"
            "#endif\n"
            "}\n",
            80);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->Spell("f", {"%r1"}), std::vector<std::string>{"a.c %r1;"});
}

// The planted change: one instruction's spelling changed in a copy of the
// prelude changes what NVRTC compiles (ptxas rejects the planted modifier
// there) and what the PTX emitter writes; with the prelude as it is, both
// spell it as the prelude does.
TEST(PreludeAsm, APlantedSpellingReachesBothBackends) {
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(testing::MbarrierPipeline(2), {.target = Target::sm90a()});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<jit::CudaHeader> planted =
      Planted(codegen::PreludeHeaders());

  // The PTX emitter.
  absl::StatusOr<codegen::GeneratedKernel> real =
      codegen::EmitPtx(lowered->state);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(absl::StrContains(real->source.text, kTryWait));
  EXPECT_FALSE(absl::StrContains(real->source.text, kPlanted));
  absl::StatusOr<PreludeAsm> planted_asm =
      PreludeAsm::Parse(Files(planted), 90);
  ASSERT_TRUE(planted_asm.ok()) << planted_asm.status();
  absl::StatusOr<codegen::GeneratedKernel> changed =
      codegen::EmitPtx(lowered->state, {}, *planted_asm);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(absl::StrContains(changed->source.text, kPlanted));
  EXPECT_FALSE(absl::StrContains(changed->source.text, kTryWait));

  // The CUDA printer's kernel, compiled by NVRTC with the prelude.
  jit::CudaSource cuda = lowered->generated.source;
  ASSERT_EQ(cuda.language, jit::SourceLanguage::kCuda);
  EXPECT_TRUE(absl::StrContains(cuda.text, "tl::mbarrier_wait_parity"));
  const jit::CompileOptions sm90a{.arch = "sm_90a"};
  absl::StatusOr<jit::Cubin> as_is = jit::Compile(cuda, sm90a);
  EXPECT_TRUE(as_is.ok()) << as_is.status();
  for (jit::CudaHeader& h : cuda.headers) {
    for (const jit::CudaHeader& p : planted) {
      if (h.name == p.name) h.content = p.content;
    }
  }
  absl::StatusOr<jit::Cubin> with_planted = jit::Compile(cuda, sm90a);
  ASSERT_FALSE(with_planted.ok());
  EXPECT_TRUE(absl::StrContains(with_planted.status().message(), "planted"))
      << with_planted.status();
}

}  // namespace
}  // namespace tessel
