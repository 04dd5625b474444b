// Hostile inputs that once crashed, wrapped silently or reached NVRTC: each
// must come back from finish() (or compile / launch) as a Status naming the
// user's line, never as a crash, a truncated value or code that runs part of
// what was asked.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"
#include "src/ir/verifier.h"
#include "tessel/tessel.h"
#include "tests/common/error_at.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// InvalidArgument at this file's `line`, mentioning every one of `words`.
void ExpectErrorAt(const absl::Status& status, int line,
                   std::initializer_list<std::string> words) {
  testing::ExpectInvalidArgumentAt(status, "hostile_input_test.cc", line,
                                   words);
}

// A builder with G (global f32 [64]) and one kernel around `body`.
absl::Status BuildKernel(const std::function<void(const T::Buffer& G)>& body) {
  T::ProgramBuilder p("test");
  auto G = p.tensor("G", {64}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    body(G);
  }
  return p.finish().status();
}

TEST(HostileInputTest, MbarrierArriveCountsOutOfRange) {
  // Count 0, a negative one or one past 2^20 - 1 once went into mbarrier.init
  // as written, and NVRTC crashed (SIGSEGV) on the generated source.
  for (int64_t count : {int64_t{0}, int64_t{-1}, int64_t{1} << 20, kInt64Max}) {
    int line = 0;
    absl::Status s = BuildKernel([&](const T::Buffer& G) {
      line = __LINE__ + 1;
      auto bars = T::alloc_barrier({128, count});
      T::mbarrier_arrive(bars(0));
      G(0) = 1.0f;
    });
    ExpectErrorAt(s, line,
                  {"alloc_barrier", absl::StrCat("arrive count ", count),
                   "1 to 1048575"});
  }
  int line = 0;
  absl::Status s = BuildKernel([&](const T::Buffer& G) {
    line = __LINE__ + 1;
    T::create_list_of_mbarrier({0});
    G(0) = 1.0f;
  });
  ExpectErrorAt(s, line, {"create_list_of_mbarrier", "arrive count 0"});
}

TEST(HostileInputTest, HugeNumStages) {
  // num_stages = INT_MAX reached the scheduler's allocations (bad_alloc).
  for (int stages : {65, 1000, std::numeric_limits<int>::max()}) {
    int line = 0;
    absl::Status s = BuildKernel([&](const T::Buffer& G) {
      auto t = T::alloc_shared({16}, T::f32);
      line = __LINE__ + 1;
      for (auto k : T::Pipelined(4, {.num_stages = stages})) {
        T::copy(G(k * 16), t);
      }
    });
    ExpectErrorAt(
        s, line,
        {"T::Pipelined", absl::StrCat("num_stages = ", stages), "at most 64"});
  }
}

TEST(HostileInputTest, GridPastCudasLimits) {
  // A grid of INT64_MAX blocks once multiplied to a wrapped block count on
  // the CPU target (one block ran, silently), a y of 2^20 failed only at
  // the GPU launch, and ceildiv(INT64_MAX, 1) threw std::length_error.
  struct Case {
    std::vector<int64_t> grid;
    int dim;
    int64_t most;
  };
  for (const Case& c :
       {Case{{kInt64Max}, 0, 2147483647},
        Case{{int64_t{1} << 31}, 0, 2147483647},
        Case{{1, int64_t{1} << 20}, 1, 65535}, Case{{1, 1, 65536}, 2, 65535}}) {
    T::ProgramBuilder p("test");
    auto G = p.tensor("G", {64}, T::f32);
    int line = 0;
    {
      std::vector<T::Expr> g(c.grid.begin(), c.grid.end());
      line = __LINE__ + 1;
      T::dsl::KernelScope kernel(g, {}, TESSEL_HERE);
      G(0) = 1.0f;
    }
    ExpectErrorAt(p.finish().status(), line,
                  {"T::Kernel", absl::StrCat("grid dimension ", c.dim),
                   absl::StrCat("1 to ", c.most)});
  }
  T::ProgramBuilder p("test");
  auto G = p.tensor("G", {64}, T::f32);
  int line = 0;
  {
    line = __LINE__ + 1;
    T::Kernel kernel(T::ceildiv(kInt64Max, 1));
    G(0) = 1.0f;
  }
  ExpectErrorAt(p.finish().status(), line, {"grid dimension 0"});
}

TEST(HostileInputTest, SymbolicGridPastTheLimitAtLaunch) {
  // A grid that only the launch's sizes make too large: the CPU target says
  // so (it used to overflow the block count) instead of running a part.
  T::ProgramBuilder p("test");
  auto N = p.dim("N");
  auto G = p.tensor("G", {N}, T::f32);
  {
    T::Kernel kernel(1, N);  // y is at most 65535
    auto [bx, by] = kernel.block_index();
    G(by) = 1.0f;
  }
  absl::StatusOr<T::Program> program = p.finish();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<T::CompiledKernel> k =
      T::compile(*program, {.target = T::Target::cpu()});
  ASSERT_TRUE(k.ok()) << k.status();
  T::HostTensor g(T::f32, {70000});
  absl::Status s =
      k->launch({T::TensorView::Contiguous(g.data(), T::f32, {70000})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("grid dimension 1 is 70000"));
  EXPECT_THAT(s.message(), HasSubstr("65535"));
  EXPECT_EQ(g.get_flat(0), 0.0);  // nothing ran
}

TEST(HostileInputTest, SizesPastInt32) {
  // Sizes are i32: 2^31 used to wrap to -2^31 (an error about "dim size
  // -2147483648" at a later op) and 2^32 + 64 silently to 64.
  for (int64_t size : {int64_t{1} << 31, (int64_t{1} << 32) + 64, kInt64Max}) {
    T::ProgramBuilder p("test");
    int line = __LINE__ + 1;
    auto G = p.tensor("G", {size}, T::f32);
    {
      T::Kernel kernel(1);
      G(0) = 1.0f;
    }
    ExpectErrorAt(p.finish().status(), line,
                  {"tensor G", absl::StrCat("dimension 0 is ", size),
                   "at most 2147483647"});
  }
  int line = 0;
  absl::Status s = BuildKernel([&](const T::Buffer&) {
    line = __LINE__ + 1;
    auto t = T::alloc_shared({(int64_t{1} << 32) + 4}, T::f32);
    T::clear(t);
  });
  ExpectErrorAt(s, line, {"alloc_shared", "dimension 0 is 4294967300"});
}

TEST(HostileInputTest, IntegerDivisionByAConstantZero) {
  // 5 / 0 once recorded fine and failed only when the CPU target ran it (the
  // GPU's result is undefined); the op that uses it is the error now.
  int line = 0;
  absl::Status s = BuildKernel([&](const T::Buffer& G) {
    line = __LINE__ + 1;
    G(T::Expr(5) / 0) = 1.0f;
  });
  ExpectErrorAt(s, line, {"store to G", "divides by a constant 0"});
  s = BuildKernel([&](const T::Buffer& G) {
    line = __LINE__ + 1;
    G(T::Expr(5) % 0) = 1.0f;
  });
  ExpectErrorAt(s, line, {"store to G", "divides by a constant 0"});
  T::ProgramBuilder p("test");
  auto G = p.tensor("G", {64}, T::f32);
  {
    line = __LINE__ + 1;
    T::Kernel kernel(T::ceildiv(64, 0));
    G(0) = 1.0f;
  }
  ExpectErrorAt(p.finish().status(), line, {"T::Kernel", "ceildiv"});
  // Float division by zero is IEEE (inf), not an error.
  EXPECT_TRUE(BuildKernel([&](const T::Buffer& G) {
                G(0) = T::Expr(1.0f) / 0.0f;
              }).ok());
}

TEST(HostileInputTest, GlobalElementWhollyOutsideTheTensor) {
  // G(-1) = ... and G(64) on a [64] tensor: written past the tensor on the
  // GPU; only the CPU target's run said so.
  for (int64_t index : {int64_t{-1}, int64_t{64}, kInt64Max}) {
    int line = 0;
    absl::Status s = BuildKernel([&](const T::Buffer& G) {
      line = __LINE__ + 1;
      G(index) = 1.0f;
    });
    ExpectErrorAt(s, line, {"store to G", "out of bounds of G"});
  }
  int line = 0;
  absl::Status s = BuildKernel([&](const T::Buffer& G) {
    for (auto i : T::Serial(4)) {
      line = __LINE__ + 1;
      G(i) = G(i + 64) + 1.0f;
    }
  });
  ExpectErrorAt(s, line, {"load G[i + 64]", "out of bounds of G"});
  // Partly inside is the program's business (guards, the interpreter).
  EXPECT_TRUE(BuildKernel([&](const T::Buffer& G) {
                for (auto i : T::Serial(4)) G(i + 62) = 1.0f;
              }).ok());
}

TEST(HostileInputTest, DtypeValuesThatAreNoDataType) {
  // A number cast to DataType read past the dtype table: finish() said OK
  // and compile() aborted (bad_alloc) printing its name.
  const auto bad = static_cast<T::DataType>(200);
  EXPECT_FALSE(T::dtype_valid(bad));
  EXPECT_TRUE(T::dtype_valid(T::fp8_e5m2));
  EXPECT_EQ(T::dtype_name(bad), "invalid");
  {
    T::ProgramBuilder p("test");
    const int line = __LINE__ + 1;
    auto X = p.tensor("X", {64}, bad);
    {
      T::Kernel kernel(1, {.threads = 64});
      X(0) = 1.0f;
    }
    ExpectErrorAt(p.finish().status(), line,
                  {"tensor X", "dtype value 200 is not a tessel::DataType"});
  }
  int line = 0;
  absl::Status s = BuildKernel([&](const T::Buffer& G) {
    line = __LINE__ + 1;
    auto f = T::alloc_fragment({64}, static_cast<T::DataType>(77));
    G(0) = 1.0f;
    (void)f;
  });
  ExpectErrorAt(s, line, {"alloc_fragment", "dtype value 77"});
  // An expression has no call site: its error is reported at the next op.
  s = BuildKernel([&](const T::Buffer& G) {
    line = __LINE__ + 1;
    G(0) = T::cast(G(1), static_cast<T::DataType>(99));
  });
  ExpectErrorAt(s, line, {"cast: dtype value 99"});
  absl::StatusOr<T::HostTensor> h = T::HostTensor::Create(bad, {4});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr("dtype value 200"));
}

TEST(HostileInputTest, TilesOfMoreThanInt32Elements) {
  // Each dimension fits i32, their product wrapped: the shared tile's size
  // came out 0, its declaration went missing and NVRTC failed ("a tessel
  // bug"); a fragment became `float frag0[0]`.
  const std::vector<std::vector<T::Expr>> shapes = {
      {1 << 30, 1 << 30, 4},
      {std::numeric_limits<int32_t>::max(),
       std::numeric_limits<int32_t>::max()},
      {1 << 16, 1 << 16}};
  for (const auto& shape : shapes) {
    for (bool shared : {true, false}) {
      int line = 0;
      absl::Status s = BuildKernel([&](const T::Buffer& G) {
        if (shared) {
          line = __LINE__ + 1;
          T::alloc_shared(shape, T::f32);
        } else {
          line = __LINE__ + 1;
          T::alloc_fragment(shape, T::f32);
        }
        G(0) = 1.0f;
      });
      ExpectErrorAt(s, line, {"has more than 2^31 - 1 elements"});
    }
  }
  // 2^31 - 1 elements exactly is a size the builder takes (the arch's
  // shared-memory limit is compile()'s to check).
  EXPECT_TRUE(BuildKernel([&](const T::Buffer& G) {
                auto t = T::alloc_fragment({46337, 46337}, T::i8);
                (void)t;
                G(0) = 1.0f;
              }).ok());
}

TEST(HostileInputTest, ConstantShiftsPastTheWidth) {
  // 1 << 40 on an i32 reached the generated CUDA as written; only the CPU
  // target's run reported it.
  for (int64_t by : {int64_t{32}, int64_t{40}, int64_t{-1}}) {
    int line = 0;
    absl::Status s = BuildKernel([&](const T::Buffer& G) {
      line = __LINE__ + 1;
      G(0) = T::cast(T::Expr(1) << T::Expr(by), T::f32);
    });
    ExpectErrorAt(
        s, line,
        {absl::StrCat("shifts by a constant ", by), "outside [0, 32)"});
  }
  EXPECT_TRUE(BuildKernel([&](const T::Buffer& G) {
                G(0) =
                    T::cast((T::Expr(1) << T::Expr(31)) >> T::Expr(3), T::f32);
              }).ok());
}

TEST(HostileInputTest, IfChainContinuedInAnotherBuilder) {
  // Else on a chain whose builder is not the current one was dropped
  // silently; one whose builder was gone attached to whichever builder
  // reused its address.
  std::optional<T::IfChain> chain;
  T::ProgramBuilder p("a");
  auto A = p.tensor("A", {4}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 32});
    chain = T::If(A(0) > 0.0f, [&] { A(0) = 1.0f; });
  }
  {
    T::ProgramBuilder q("b");
    auto B = q.tensor("B", {4}, T::f32);
    const int line = __LINE__ + 3;
    {
      T::Kernel kernel(1, {.threads = 32});
      chain->Else([&] { B(0) = 2.0f; });
    }
    ExpectErrorAt(q.finish().status(), line,
                  {"Else", "another ProgramBuilder"});
  }
  EXPECT_TRUE(p.finish().ok());
  // A chain kept past its builder, continued in a new one.
  std::optional<T::IfChain> stale;
  {
    T::ProgramBuilder gone("gone");
    auto G = gone.tensor("G", {4}, T::f32);
    T::Kernel kernel(1, {.threads = 32});
    stale = T::If(G(0) > 0.0f, [&] { G(0) = 1.0f; });
  }
  T::ProgramBuilder r("r");
  auto R = r.tensor("R", {4}, T::f32);
  const int line = __LINE__ + 4;
  {
    T::Kernel kernel(1, {.threads = 32});
    T::If(R(0) > 0.0f, [&] { R(0) = 1.0f; });
    stale->ElseIf(R(1) > 0.0f, [&] { R(0) = 9.0f; });
  }
  ExpectErrorAt(r.finish().status(), line,
                {"ElseIf", "another ProgramBuilder"});
}

}  // namespace
}  // namespace tessel
