// The PTX emitter (src/codegen/ptx/): what it spells for a few kernels, and
// that ptxas assembles it (no GPU needed). tessel_compiles_for_sm90a_test
// runs it over every listed kernel; the GPU suites run its kernels against
// the interpreter with TESSEL_PTX=1.
#include <gtest/gtest.h>

#include <bit>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "jit/ptx_compile.h"
#include "jit/ptx_translation.h"
#include "src/codegen/ptx/ptx_codegen.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"
#include "tessel/testing.h"
#include "tests/codegen/chained_gemm.h"
#include "tests/codegen/row_reduce_cases.h"
#include "tests/codegen/test_programs.h"
#include "tests/common/count.h"

namespace tessel {
namespace {

using testing::Count;

struct Ptx {
  bool ok = false;
  std::string text;
};

// The input ChooseCompileInput picks for `program` on `target`.
jit::CompileInput Chosen(const ir::Program& program, const Target& target) {
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(program, {.target = target, .direct_ptx = true});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return {};
  absl::StatusOr<jit::CompileInput> input =
      jit::ChooseCompileInput(lowered->generated.source, lowered->jit_options);
  EXPECT_TRUE(input.ok()) << input.status();
  return input.ok() ? *std::move(input) : jit::CompileInput{};
}

// The PTX a cache miss would hand to ptxas for `program`, assembled.
Ptx Compile(const ir::Program& program, const Target& target) {
  const jit::CompileInput input = Chosen(program, target);
  EXPECT_EQ(input.source.language, jit::SourceLanguage::kPtx)
      << input.ptx_fallback;
  absl::StatusOr<jit::Cubin> cubin = jit::Compile(input.source, input.options);
  EXPECT_TRUE(cubin.ok()) << cubin.status();
  return {cubin.ok(), input.source.text};
}

TEST(PtxEmitter, WgmmaGemmGoesStraightToPtxas) {
  const Ptx k =
      Compile(testing::Gemm(testing::WgmmaGemm(false)), Target::sm90a());
  ASSERT_TRUE(k.ok);
  EXPECT_TRUE(absl::StrContains(k.text, ".target sm_90a"));
  EXPECT_EQ(Count(k.text, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
            4);
  // No CUDA C++ and no NVVM: the prelude's functions are instructions.
  EXPECT_EQ(Count(k.text, "tl::"), 0);
  EXPECT_GT(Count(k.text, "wgmma.wait_group.sync.aligned"), 0);
}

// A wgmma whose A registers an ldmatrix filled (32-wide k tiles: A's rows
// too narrow for a descriptor) is spelled; one whose A the program computed
// (flash attention's P) is left to NVRTC (ptx_intrinsics.cc says why).
TEST(PtxEmitter, WgmmaOfARegistersFromSharedMemoryOnly) {
  const Ptx k = Compile(testing::Gemm({.bk = 32}), Target::sm90a());
  ASSERT_TRUE(k.ok);
  EXPECT_GT(Count(k.text, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 0);
  const std::regex register_a(
      R"(wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.f16\.f16 \{[^}]*\}, \{)");
  EXPECT_TRUE(std::regex_search(k.text, register_a));

  absl::StatusOr<Program> chained = testing::ChainedGemm({});
  ASSERT_TRUE(chained.ok()) << chained.status();
  const jit::CompileInput p = Chosen(chained->ir(), Target::sm90a());
  EXPECT_EQ(p.source.language, jit::SourceLanguage::kCuda);
  EXPECT_EQ(p.ptx_fallback, "ptx: wgmma with A in registers");
}

TEST(PtxEmitter, IndexArithmeticIsFoldedAndStrengthReduced) {
  // mma.sync on sm_80. The unrolled nests' indices fold to constants; the
  // floor divisions and modulos by powers of two (thread and fragment
  // coordinates) are shifts and masks, exact for negative values too.
  const Ptx k =
      Compile(testing::Gemm(testing::WgmmaGemm(false)), Target::cuda("sm_80"));
  ASSERT_TRUE(k.ok);
  EXPECT_TRUE(absl::StrContains(k.text, ".target sm_80"));
  EXPECT_GT(Count(k.text, "mma.sync.aligned.m16n8k16"), 0);
  EXPECT_GT(Count(k.text, "ldmatrix.sync.aligned"), 0);
  EXPECT_FALSE(std::regex_search(
      k.text,
      std::regex(R"((div|rem)\.s32 %r\d+, %r\d+, (2|4|8|16|32|64|128|256);)")));
  // Nor by any other constant: ptxas would divide the long way.
  EXPECT_FALSE(std::regex_search(
      k.text, std::regex(R"((div|rem)\.[su]32 %r\d+, %r\d+, \d+;)")));
  EXPECT_GT(Count(k.text, "shr.s32"), 0);
  EXPECT_GT(Count(k.text, "and.b32"), 0);
}

TEST(PtxEmitter, ProgramsWithoutTensorCoresToo) {
  for (const ir::Program& p :
       {testing::Elementwise(1000), testing::CopyRoundTrip(100, 70),
        testing::ReverseTile(3), testing::DoubleBuffered(5),
        testing::MbarrierPipeline(4)}) {
    for (const Target& t : {Target::sm90a(), Target::cuda("sm_80")}) {
      const Ptx k = Compile(p, t);
      EXPECT_TRUE(k.ok);
      EXPECT_TRUE(absl::StrContains(k.text, ".visible .entry")) << p.name;
    }
  }
}

// cumsum's row scans within a warp are shuffles whose predicate keeps each
// group of lanes to itself (shfl.up, shfl.down reversed); the GPU suites
// check their sums (row_reduce_gpu_test, seed_gpu_test with TESSEL_PTX=1).
TEST(PtxEmitter, WarpScansAreShuffles) {
  for (const testing::ScanCase& c : testing::ScanCases()) {
    absl::StatusOr<Program> p = testing::RowCumsumProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    for (const Target& t : {Target::sm90a(), Target::cuda("sm_80")}) {
      const Ptx k = Compile(p->ir(), t);
      ASSERT_TRUE(k.ok) << c.name;
      if (c.group > 32) continue;  // the staged scan: no warp shuffles
      const std::string scan =
          c.reverse ? "shfl.sync.down.b32" : "shfl.sync.up.b32";
      // log2(group) steps and the shift by one lane, per scanned value.
      EXPECT_GE(Count(k.text, scan),
                std::countr_zero(static_cast<unsigned>(c.group)) + 1)
          << c.name;
      EXPECT_GT(Count(k.text, "selp.b32"), 0) << c.name;
    }
  }
}

// Vector atomic adds (many blocks adding f32 tiles into one): one red of
// four floats on sm_90 (PTX ISA 8.1), four scalar reds before, as the
// prelude's atomic_add_f32x4 does.
TEST(PtxEmitter, VectorAtomicsAreOneRedOnSm90) {
  const ir::Program p = testing::AtomicAccumulate(4, 64);
  const Ptx hopper = Compile(p, Target::sm90a());
  ASSERT_TRUE(hopper.ok);
  EXPECT_TRUE(absl::StrContains(hopper.text, ".version 8.1"));
  const int vectors = Count(hopper.text, "red.global.add.v4.f32 ");
  EXPECT_GT(vectors, 0);
  const Ptx ampere = Compile(p, Target::cuda("sm_80"));
  ASSERT_TRUE(ampere.ok);
  EXPECT_TRUE(absl::StrContains(ampere.text, ".version 7.8"));
  EXPECT_EQ(Count(ampere.text, "red.global.add.v4.f32 "), 0);
  EXPECT_EQ(Count(ampere.text, "red.global.add.f32 "),
            Count(hopper.text, "red.global.add.f32 ") + 4 * vectors);
}

// Division by a constant is a multiply (ptxas would divide the long way):
// exact for every divisor's edges and many dividends, and floor division of
// negative values through x ^ (x >> 31), as the emitter spells it.
TEST(PtxEmitter, DivisionByAConstantIsAnExactMultiply) {
  std::vector<int64_t> divisors = {
      3,    5,    6,     7,          9,
      10,   12,   24,    48,         96,
      100,  125,  255,   257,        641,
      1000, 4095, 65537, 1000000007, (int64_t{1} << 31) - 1};
  for (int64_t d = 3; d < 3000; ++d) {
    if ((d & (d - 1)) != 0) divisors.push_back(d);
  }
  uint64_t state = 88172645463325252u;  // xorshift: dividends across the range
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<int64_t>(state % (uint64_t{1} << 31));
  };
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  for (int64_t d : divisors) {
    const codegen::ptx::DivisionMagic m = codegen::ptx::MagicForDivisionBy(d);
    const auto divide = [&](int64_t x) {
      return static_cast<int64_t>(
          ((static_cast<uint64_t>(x) * m.magic) >> 32) >> m.shift);
    };
    std::vector<int64_t> xs = {0,
                               1,
                               d - 1,
                               d,
                               d + 1,
                               kMax,
                               kMax - 1,
                               kMax - kMax % d,
                               kMax - kMax % d - 1};
    for (int i = 0; i < 200; ++i) xs.push_back(next());
    for (int64_t x : xs) {
      ASSERT_EQ(divide(x), x / d) << x << " / " << d;
      // floor(-x - 1 / d) = ~((x) / d) for the sign-folded form.
      const int64_t neg = -x - 1;
      const int64_t floor = neg / d - (neg % d != 0 ? 1 : 0);
      ASSERT_EQ(~divide(x), floor) << neg << " / " << d;
    }
  }
}

// The instructions of the first loop of `ptx` (from its head label to the
// branch back to it); empty when it has none.
std::string FirstLoop(const std::string& ptx) {
  static const std::regex kBranch(R"(bra (\$L\d+);)");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), kBranch), end; it != end;
       ++it) {
    // A backward branch: its label comes before it.
    const size_t head = ptx.find((*it)[1].str() + ":");
    const size_t branch = static_cast<size_t>(it->position());
    if (head != std::string::npos && head < branch) {
      return ptx.substr(head, branch - head);
    }
  }
  return "";
}

// What a loop computes from values outside it is computed once, before it
// (NVVM's LICM): the sm_80 GEMM's swizzled shared addresses leave its k
// loop. PtxEmitOptions::hoist_out_of_loops = false (the spelling the cache
// compiles too where the first spills) keeps them in, as before.
TEST(PtxEmitter, LoopInvariantValuesAreComputedBeforeTheLoop) {
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(testing::Gemm(testing::WgmmaGemm(false)),
                     {.target = Target::cuda("sm_80"), .direct_ptx = true});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<codegen::GeneratedKernel> hoisted =
      codegen::EmitPtx(lowered->state);
  absl::StatusOr<codegen::GeneratedKernel> kept_in =
      codegen::EmitPtx(lowered->state, {.hoist_out_of_loops = false});
  ASSERT_TRUE(hoisted.ok()) << hoisted.status();
  ASSERT_TRUE(kept_in.ok()) << kept_in.status();
  const std::string outside = FirstLoop(hoisted->source.text);
  const std::string inside = FirstLoop(kept_in->source.text);
  ASSERT_FALSE(outside.empty());
  ASSERT_FALSE(inside.empty());
  // The same tensor-core work per iteration, less index arithmetic.
  EXPECT_EQ(Count(outside, "mma.sync"), Count(inside, "mma.sync"));
  EXPECT_GT(Count(outside, "mma.sync"), 0);
  EXPECT_LT(Count(outside, "xor.b32"), Count(inside, "xor.b32"));
  EXPECT_LT(Count(outside, "\n"), Count(inside, "\n"));
  for (const codegen::GeneratedKernel* k : {&*hoisted, &*kept_in}) {
    absl::StatusOr<jit::Cubin> cubin =
        jit::Compile(k->source, {.arch = "sm_80"});
    EXPECT_TRUE(cubin.ok()) << cubin.status();
  }
}

// compile() offers the translation by default, not when asked not to, and
// never with fast_math; CompiledKernel::source() stays the CUDA C++.
TEST(PtxEmitter, OfferedByDefaultNotOnRequestNorWithFastMath) {
  const ir::Program p = testing::Elementwise(1000);
  const auto offered = [&](const CompileOptions& options) {
    absl::StatusOr<runtime::Lowered> lowered = runtime::Lower(p, options);
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    return lowered.ok() && lowered->generated.source.to_ptx != nullptr;
  };
  if (std::getenv("TESSEL_PTX") == nullptr) {
    EXPECT_EQ(offered({.target = Target::sm90a()}), jit::PtxasAvailable());
    EXPECT_FALSE(offered({.target = Target::sm90a(), .direct_ptx = false}));
  }
  EXPECT_FALSE(offered(
      {.target = Target::sm90a(), .fast_math = true, .direct_ptx = true}));
  absl::StatusOr<CompiledKernel> k = compile(p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(absl::StrContains(k->source(), "__global__"));
}

}  // namespace
}  // namespace tessel
