// Every class of error compile() returns for a user's program names the
// user's file:line (this file's) of the op that caused it, in the user's
// words (buffers, shapes), not the scheduler's layouts. Compiled for sm_90a
// and sm_80 through NVRTC; no GPU needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// "user_errors_test.cc:<line>", as the message must contain it.
std::string Here(int line) {
  return absl::StrCat("user_errors_test.cc:", line);
}

// The words of the scheduler's layouts, which users never see.
auto NoLayoutDump() {
  return AllOf(Not(HasSubstr("mma[")), Not(HasSubstr("blocked[")),
               Not(HasSubstr("replicated[")), Not(HasSubstr(" vec ")));
}

absl::Status CompileFor(const absl::StatusOr<Program>& p, Target target) {
  if (!p.ok()) return p.status();
  return compile(*p, {.target = target}).status();
}

// The tensors of a 64 x 64 gemm over k: A [64, k] and B [k, 64] of `in`, C
// [64, 64] f32.
struct GemmTensors {
  GemmTensors(T::ProgramBuilder& p, int k, DataType in)
      : A(p.tensor("A", {64, k}, in)),
        B(p.tensor("B", {k, 64}, in)),
        C(p.tensor("C", {64, 64}, T::f32)) {}
  T::Buffer A, B, C;
};

// One accumulator fragment per name, each A x B on tensor cores, through
// one pair of shared tiles.
std::vector<T::Buffer> Products(const T::Buffer& A, const T::Buffer& B,
                                std::initializer_list<const char*> names) {
  auto a = T::alloc_shared({64, 32}, T::f16, "a");
  auto b = T::alloc_shared({32, 64}, T::f16, "b");
  T::copy(A(0, 0), a);
  T::copy(B(0, 0), b);
  std::vector<T::Buffer> accs;
  for (const char* name : names) {
    accs.push_back(T::alloc_fragment({64, 64}, T::f32, name));
    T::gemm(a, b, accs.back(), {.clear_accum = true});
  }
  return accs;
}

// A gemm accumulator read transposed in a T.Parallel loop: each thread holds
// other elements than the loop's, which the lowering cannot reach.
TEST(UserErrors, FragmentReadAtAnotherThreadsElements) {
  T::ProgramBuilder p("transposed_accumulator");
  auto [A, B, C] = GemmTensors(p, 32, T::f16);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 128});
    auto acc = Products(A, B, {"acc"})[0];
    auto out = T::alloc_fragment({64, 64}, T::f32, "out");
    for (auto [i, j] : T::Parallel(64, 64)) {
      line = __LINE__ + 1;
      out(i, j) = acc(j, i);
    }
    T::copy(out, C(0, 0));
  }
  absl::StatusOr<Program> program = p.finish();
  absl::Status s = CompileFor(program, Target::sm90a());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
  // The loop's variables have no names of the user's: said in words.
  EXPECT_THAT(s.message(),
              HasSubstr("fragment acc [64, 64] (spread over the threads as a "
                        "gemm accumulator) is read at [the second loop index, "
                        "the first loop index] in the T.Parallel loop at "));
  EXPECT_THAT(s.message(), HasSubstr("T::alloc_shared"));
  EXPECT_THAT(s.message(), NoLayoutDump()) << s;
  // The interpreter could run it, but the CPU target refuses what the GPU
  // lowering refuses: the two targets take the same programs.
  absl::Status cpu = CompileFor(program, Target::cpu());
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.code(), s.code());
  EXPECT_THAT(cpu.message(), HasSubstr(Here(line))) << cpu;
  EXPECT_THAT(cpu.message(), HasSubstr("Target::cpu() refuses")) << cpu;
}

// Every fragment the loop cannot reach is named in one error, not the first
// alone.
TEST(UserErrors, EveryUnreachableFragmentOfALoopAtOnce) {
  T::ProgramBuilder p("two_transposed_reads");
  auto [A, B, C] = GemmTensors(p, 32, T::f16);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 128});
    auto accs = Products(A, B, {"acc", "acc2"});
    const T::Buffer &acc = accs[0], &acc2 = accs[1];
    auto out = T::alloc_fragment({64, 64}, T::f32, "out");
    for (auto [i, j] : T::Parallel(64, 64)) {
      line = __LINE__ + 1;
      out(i, j) = acc(j, i) + acc2(j, i);
    }
    T::copy(out, C(0, 0));
  }
  absl::Status s = CompileFor(p.finish(), Target::sm90a());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
  EXPECT_THAT(s.message(), HasSubstr("fragment acc [64, 64]")) << s;
  EXPECT_THAT(s.message(), HasSubstr("; fragment acc2 [64, 64]")) << s;
  EXPECT_THAT(s.message(), HasSubstr("keep acc, acc2 in shared memory")) << s;
  EXPECT_THAT(s.message(), Not(HasSubstr("src/"))) << s;
}

// A fragment element read outside any T.Parallel loop (the lowering meets
// the load inside a store, which carries the line).
TEST(UserErrors, FragmentElementOutsideAParallelLoop) {
  T::ProgramBuilder p("fragment_in_serial_loop");
  auto X = p.tensor("X", {4}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({4}, T::f32, "x");
    auto s = T::alloc_shared({4}, T::f32, "s");
    T::fill(x, 1.0);
    for (auto k : T::Serial(4)) {
      line = __LINE__ + 1;
      s(k) = x(k);
    }
    T::copy(s, X(0));
  }
  absl::Status s = CompileFor(p.finish(), Target::sm90a());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
  EXPECT_THAT(s.message(), HasSubstr("fragment x"));
}

// A register A operand of a gemm that has no mma.sync path (f32).
TEST(UserErrors, RegisterOperandWithoutATensorCorePath) {
  T::ProgramBuilder p("f32_register_gemm");
  auto [A, B, C] = GemmTensors(p, 32, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 128});
    auto a = T::alloc_fragment({64, 32}, T::f32, "a");
    auto b = T::alloc_shared({32, 64}, T::f32, "b");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::copy(A(0, 0), a);
    T::copy(B(0, 0), b);
    line = __LINE__ + 1;
    T::gemm(a, b, acc, {.clear_accum = true});
    T::copy(acc, C(0, 0));
  }
  absl::Status s = CompileFor(p.finish(), Target::sm90a());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
  EXPECT_THAT(s.message(), NoLayoutDump()) << s;
}

// More shared memory than a block may have: the line of the largest tile.
TEST(UserErrors, SharedMemoryTooLargeNamesTheLargestTile) {
  T::ProgramBuilder p("huge_tile");
  auto X = p.tensor("X", {512, 512}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 128});
    auto small = T::alloc_shared({16, 16}, T::f32, "small");
    line = __LINE__ + 1;
    auto big = T::alloc_shared({512, 512}, T::f32, "big");
    T::copy(X(0, 0), big);
    T::copy(X(0, 0), small);
    T::copy(big, X(0, 0));
    T::copy(small, X(0, 0));
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target target : {Target::sm90a(), Target::sm80()}) {
    absl::Status s = CompileFor(program, target);
    ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
    EXPECT_THAT(s.message(), HasSubstr("big 1048576 B"));
    EXPECT_THAT(s.message(), HasSubstr(target.arch()));
    // The planner's check on its own says the same.
    EXPECT_EQ(CheckSharedMemoryFits(*program, target), s);
  }
}

// A gemm accumulator that one thread would hold whole (4096 f32 elements,
// NVRTC ran for minutes over its unrolled loops): refused before NVRTC, on
// the GPU targets and on Target::cpu(), naming the fragment and its line.
TEST(UserErrors, FragmentTooLargeForItsThreadsNamesItsAllocation) {
  T::ProgramBuilder p("one_thread_gemm");
  auto [A, B, C] = GemmTensors(p, 64, T::f16);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 1});
    auto a = T::alloc_shared({64, 64}, T::f16, "a");
    auto b = T::alloc_shared({64, 64}, T::f16, "b");
    line = __LINE__ + 1;
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::copy(A(0, 0), a);
    T::copy(B(0, 0), b);
    T::gemm(a, b, acc, {.clear_accum = true});
    T::copy(acc, C(0, 0));
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target target : {Target::sm90a(), Target::sm80(), Target::cpu()}) {
    absl::Status s = CompileFor(program, target);
    ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("acc (fragment f32 [64, 64] spread over 1 thread), "
                          "takes 16384 bytes per thread"))
        << s;
    EXPECT_THAT(s.message(), HasSubstr("tessel allows 4096 bytes per thread"));
    EXPECT_THAT(s.message(), NoLayoutDump()) << s;
  }
  // More shared memory or fewer stages would not help: not the planner's.
  EXPECT_TRUE(CheckSharedMemoryFits(*program, Target::sm90a()).ok());
}

// Absurd per-thread arrays (gigabytes: more than CUDA's 512 KiB of local
// memory per thread, and the interpreter would allocate them) are refused
// at once, with the sizes in full (on Target::cpu(), by the interpreter's
// tile bound, src/interp/executable.h).
TEST(UserErrors, HugeFragmentsAndLocalsAreResourceExhausted) {
  for (bool local : {false, true}) {
    SCOPED_TRACE(local ? "alloc_local" : "alloc_fragment");
    T::ProgramBuilder p("huge_arrays");
    auto X = p.tensor("X", {1 << 20, 1 << 10}, T::f32);
    int line = 0;
    {
      T::Kernel kernel(1, {.threads = 128});
      if (local) {
        line = __LINE__ + 1;
        auto big = T::alloc_local({1 << 30}, T::f32, "big");
        big(0) = X(0, 0);
        X(0, 1) = big(0);
      } else {
        line = __LINE__ + 1;
        auto big = T::alloc_fragment({1 << 20, 1 << 10}, T::f32, "big");
        T::copy(X(0, 0), big);
        T::copy(big, X(0, 0));
      }
    }
    absl::StatusOr<Program> program = p.finish();
    ASSERT_TRUE(program.ok()) << program.status();
    for (Target target : {Target::sm90a(), Target::sm80(), Target::cpu()}) {
      absl::Status s = CompileFor(program, target);
      ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
      EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
      // Target::cpu() meets the interpreter's own bound first.
      if (target.kind() == Target::Kind::kCpu) {
        EXPECT_THAT(s.message(), HasSubstr("'big' (")) << s;
        continue;
      }
      EXPECT_THAT(s.message(),
                  HasSubstr(local ? "big (local f32 [1073741824]), takes "
                                    "4294967296 bytes per thread"
                                  : "big (fragment f32 [1048576, 1024] spread "
                                    "over 128 threads), takes 33554432 bytes "
                                    "per thread"))
          << s;
    }
  }
}

// An arch this NVRTC does not compile for, one older than sm_80, and a
// malformed one: the Target's line, no "tessel bug".
TEST(UserErrors, BadArchNamesTheTargetsLine) {
  T::ProgramBuilder p("scale");
  auto X = p.tensor("X", {32}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({32}, T::f32, "x");
    T::copy(X(0), x);
    for (auto i : T::Parallel(32)) x(i) = x(i) * 2.0f;
    T::copy(x, X(0));
  }
  absl::StatusOr<Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  // "sm_90b", "sm_8x0", "sm_90aa" and an arch with a NUL byte were once read
  // as sm_90 / sm_80 and failed in NVRTC, blamed on the generated code.
  for (std::string arch :
       {std::string("sm_999"), std::string("sm_75"), std::string("hopper"),
        std::string("sm_90b"), std::string("sm_8x0"), std::string("sm_90aa"),
        std::string("sm_80\0x", 7), std::string("sm_"), std::string(""),
        std::string("sm_090a")}) {
    const int line = __LINE__ + 1;
    Target target = Target::cuda(arch);
    absl::Status s = CompileFor(program, target);
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << arch;
    EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("\"", arch, "\"")));
    EXPECT_THAT(s.message(), Not(HasSubstr("tessel bug"))) << s;
  }
  EXPECT_THAT(Target::cuda("sm_999").status().message(),
              HasSubstr("not an arch that NVRTC"));
  EXPECT_THAT(Target::cuda("sm_75").status().message(),
              HasSubstr("older than sm_80"));
  EXPECT_TRUE(Target::cuda("sm_90a").status().ok());
  EXPECT_TRUE(Target::cuda("sm_80").status().ok());
}

// The shared memory a block may opt into, per the CUDA guide: the consumer
// Blackwells (sm_120, sm_121) have sm_89's 99 KB, not Hopper's 227 KB (a
// tile between the two passed the check and failed at the driver).
TEST(UserErrors, SharedMemoryLimitsPerArch) {
  EXPECT_EQ(Target::cuda("sm_80").max_shared_bytes(), 166912);
  EXPECT_EQ(Target::cuda("sm_89").max_shared_bytes(), 101376);
  EXPECT_EQ(Target::cuda("sm_90a").max_shared_bytes(), 232448);
  EXPECT_EQ(Target::cuda("sm_100a").max_shared_bytes(), 232448);
  EXPECT_EQ(Target::cuda("sm_120").max_shared_bytes(), 101376);
  EXPECT_EQ(Target::cuda("sm_121a").max_shared_bytes(), 101376);
}

// A transaction count no copy of the program delivers (only the
// scheduler's TMA copies do): the lowering names the op's line.
TEST(UserErrors, ExpectTxWithoutTmaCopies) {
  T::ProgramBuilder p("expect_tx");
  auto X = p.tensor("X", {32}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 32});
    auto bars = T::alloc_barrier({32}, "bars");
    auto x = T::alloc_fragment({32}, T::f32, "x");
    T::copy(X(0), x);
    line = __LINE__ + 1;
    T::mbarrier_expect_tx(bars(0), 128);
    T::copy(x, X(0));
  }
  absl::Status s = CompileFor(p.finish(), Target::sm90a());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(Here(line))) << s;
  EXPECT_THAT(s.message(), HasSubstr("mbarrier_expect_tx")) << s;
}

// An index from input: checked_at / checked_set return OutOfRange where
// at / set abort.
TEST(UserErrors, HostTensorCheckedAccessReturnsAStatus) {
  HostTensor t(T::f32, {2, 3});
  ASSERT_TRUE(t.checked_set({1, 2}, 5.0).ok());
  absl::StatusOr<double> x = t.checked_at({1, 2});
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(*x, 5.0);
  for (absl::Status s :
       {t.checked_at({2, 0}).status(), t.checked_at({0, -1}).status(),
        t.checked_at({0}).status(), t.checked_set({0, 3}, 1)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
    EXPECT_THAT(s.message(), HasSubstr("f32[2, 3]")) << s;
  }
  // Nothing written by the refused set.
  EXPECT_EQ(t.to_doubles(), std::vector<double>({0, 0, 0, 0, 0, 5}));
}

}  // namespace
}  // namespace tessel
