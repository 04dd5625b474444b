// T::alloc_uniform, the assignable block-uniform variable: a search that
// every thread runs alike is accepted (and its reads guard a gemm), the
// verifier refuses an assignment that would make threads disagree (a
// per-thread value, a Parallel loop, a per-thread T::If), at the
// assignment's line, saying why; the text reads back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "src/ir/parser.h"
#include "src/ir/printer.h"
#include "src/ir/structural.h"
#include "tessel/tessel.h"
#include "tests/common/error_at.h"
#include "tests/common/one_kernel.h"

namespace tessel {
namespace {

namespace T = tessel;
using testing::BuildOneKernel;
using ::testing::HasSubstr;

void ExpectErrorAt(const absl::Status& status, int line,
                   std::initializer_list<std::string> words) {
  testing::ExpectInvalidArgumentAt(status, "uniform_test.cc", line, words);
}

// Block b finds the group of its first row by scanning Offsets, then
// multiplies its rows by the group's weights, if it has a group.
absl::StatusOr<T::Program> GroupSearch() {
  T::ProgramBuilder p("group_search");
  auto X = p.tensor("X", {256, 64}, T::f16);
  auto W = p.tensor("W", {4, 64, 64}, T::f16);
  auto Offsets = p.tensor("Offsets", {5}, T::i32);
  auto Out = p.tensor("Out", {256, 64}, T::f32);
  {
    T::Kernel kernel(4, {.threads = 128});
    auto [b] = kernel.block_index();
    auto e = T::alloc_uniform(T::i32, "expert");
    e = 0;
    for (auto g : T::Serial(4))
      T::If(Offsets(g + 1) <= b * 64, [&] { e = g + 1; });
    auto Xs = T::alloc_shared({64, 64}, T::f16, "Xs");
    auto Ws = T::alloc_shared({64, 64}, T::f16, "Ws");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::If(e < 4, [&] {
      T::copy(X(b * 64, 0), Xs);
      T::copy(W(e, 0, 0), Ws);
      T::clear(acc);
      T::gemm(Xs, Ws, acc);
      T::copy(acc, Out(b * 64, 0));
    });
  }
  return p.finish();
}

TEST(Uniform, ASearchGuardsAGemm) {
  absl::StatusOr<T::Program> p = GroupSearch();
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::ToString(p->ir());
  EXPECT_THAT(text, HasSubstr("expert = T.alloc_uniform(i32)"));
  EXPECT_THAT(text, HasSubstr("expert[0] = i + 1"));
  EXPECT_THAT(text, HasSubstr("if expert[0] < 4:"));
}

TEST(Uniform, TextReadsBack) {
  absl::StatusOr<T::Program> p = GroupSearch();
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::ToString(p->ir());
  absl::StatusOr<ir::Program> parsed = ir::ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ir::ToString(*parsed), text);
  EXPECT_EQ(ir::StructuralHash(*parsed), ir::StructuralHash(p->ir()));
}

TEST(Uniform, APerThreadValueIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto v = T::alloc_var(T::f32, "v");
    v = G(0, 0);
    auto u = T::alloc_uniform(T::f32, "u");
    line = __LINE__ + 1;
    u = v + 1.0f;
    G(0, 1) = u;
  });
  ExpectErrorAt(s, line,
                {"assigned to u (uniform)", "not the same in every thread",
                 "v (var f32)", "per-thread"});
}

TEST(Uniform, AnAssignmentInAParallelLoopIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto u = T::alloc_uniform(T::f32, "u");
    for (auto i : T::Parallel(64)) {
      line = __LINE__ + 1;
      u = G(0, 0);
      G(1, i) = u;
    }
  });
  ExpectErrorAt(s, line, {"u (uniform f32)", "inside a Parallel loop"});
}

TEST(Uniform, AnAssignmentUnderAPerThreadIfIsRefused) {
  int line = 0, if_line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto v = T::alloc_var(T::f32, "v");
    v = G(0, 0);
    auto u = T::alloc_uniform(T::i32, "u");
    u = 0;
    if_line = __LINE__ + 1;
    T::If(v > 0.0f, [&] {
      line = __LINE__ + 1;
      u = 1;
    });
    G(0, 1) = T::cast(u, T::f32);
  });
  ExpectErrorAt(s, line,
                {"u (uniform)", "T::If whose condition",
                 "differs between "
                 "threads",
                 "uniform_test.cc:" + std::to_string(if_line)});
}

TEST(Uniform, ALoopOfPerThreadBoundsIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto n = T::alloc_var(T::i32, "n");
    n = T::cast(G(0, 0), T::i32);
    auto u = T::alloc_uniform(T::i32, "u");
    u = 0;
    for (auto k : T::Serial(n)) {
      line = __LINE__ + 1;
      u = k;
    }
    G(0, 1) = T::cast(u, T::f32);
  });
  ExpectErrorAt(s, line, {"u (uniform)", "loop whose bounds differ"});
}

TEST(Uniform, ALetMayReadIt) {
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto u = T::alloc_uniform(T::i32, "u");
    u = 3;
    auto x = T::let(G(u, 0), "x");
    G(0, 1) = x;
  });
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace tessel
