// T::let, the block-uniform scalar: where it is accepted (loop bounds,
// guards around tile ops and gemms, copy starts), what the verifier
// refuses (a value that differs between threads, at the let's line, saying
// why), and that its text and hash are those of the program.
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
  testing::ExpectInvalidArgumentAt(status, "let_test.cc", line, words);
}

// A paged gather whose page count, page and guard are lets; `page_of`
// picks the page's value.
absl::StatusOr<T::Program> Paged(int table_offset = 0) {
  T::ProgramBuilder p("paged");
  auto Cache = p.tensor("Cache", {32, 64, 64}, T::f16);
  auto Table = p.tensor("Table", {4, 8}, T::i32);
  auto Lens = p.tensor("Lens", {4}, T::i32);
  auto Out = p.tensor("Out", {4, 64, 64}, T::f32);
  {
    T::Kernel kernel(4, {.threads = 128});
    auto [b] = kernel.block_index();
    auto len = T::let(Lens(b), "len");
    auto Ks = T::alloc_shared({64, 64}, T::f16);
    auto Ps = T::alloc_shared({64, 64}, T::f16);
    auto acc = T::alloc_fragment({64, 64}, T::f32);
    T::clear(acc);
    for (auto k : T::Pipelined(T::ceildiv(len, 64), {.num_stages = 2})) {
      auto page = T::let(Table(b, k) + table_offset, "page");
      T::copy(Cache(page, 0, 0), Ks);
      T::copy(Cache(page, 0, 0), Ps);
      T::If(page >= 0, [&] { T::gemm(Ks, Ps, acc); });
    }
    T::If(len > 0, [&] { T::copy(acc, Out(b, 0, 0)); });
  }
  return p.finish();
}

TEST(Let, UsableInLoopBoundsGuardsAndCopyStarts) {
  absl::StatusOr<T::Program> p = Paged();
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::ToString(p->ir());
  EXPECT_THAT(text, HasSubstr("T.call_intrin(i32, \"let\", len, Lens[bx])"));
  EXPECT_THAT(text, HasSubstr("T.Pipelined(T.ceildiv(len, 64)"));
  EXPECT_THAT(text, HasSubstr("T.copy(Cache[page, 0:64, 0:64]"));
  EXPECT_THAT(text, HasSubstr("if page >= 0:"));
}

TEST(Let, TextReadsBackAndHashesByValue) {
  absl::StatusOr<T::Program> a = Paged(), b = Paged(1);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string text = ir::ToString(a->ir());
  absl::StatusOr<ir::Program> parsed = ir::ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ir::ToString(*parsed), text);
  EXPECT_EQ(ir::StructuralHash(*parsed), ir::StructuralHash(a->ir()));
  EXPECT_NE(ir::StructuralHash(a->ir()), ir::StructuralHash(b->ir()));
}

TEST(Let, AFragmentElementIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto acc = T::alloc_fragment({64}, T::f32, "acc");
    T::clear(acc);
    line = __LINE__ + 1;
    auto x = T::let(acc(3), "x");
    G(0, 0) = x;
  });
  ExpectErrorAt(s, line,
                {"T::let x", "not the same in every thread",
                 "acc (fragment f32)", "registers"});
}

TEST(Let, AParallelIndexIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    for (auto i : T::Parallel(64)) {
      line = __LINE__ + 1;
      auto x = T::let(G(0, i), "x");
      G(1, i) = x;
    }
  });
  ExpectErrorAt(s, line, {"T::let x", "index of a Parallel loop"});
}

TEST(Let, APerThreadVarIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    auto v = T::alloc_var(T::f32, "v");
    v = G(0, 0);
    line = __LINE__ + 1;
    auto x = T::let(v + 1.0f, "x");
    G(0, 1) = x;
  });
  ExpectErrorAt(s, line, {"T::let x", "v (var f32)", "per-thread"});
}

TEST(Let, AUniformValueInsideAParallelLoopIsRefused) {
  int line = 0;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    for (auto i : T::Parallel(64)) {
      line = __LINE__ + 1;
      auto x = T::let(G(0, 0), "x");
      G(1, i) = x;
    }
  });
  ExpectErrorAt(s, line, {"T::let x", "inside a Parallel loop"});
}

TEST(Let, OutOfScopeUseIsRefused) {
  T::Expr leaked;
  absl::Status s = BuildOneKernel([&](const T::Buffer& G) {
    for (auto k : T::Serial(4)) {
      leaked = T::let(G(k, 0), "x");
    }
    G(0, 0) = leaked;
  });
  EXPECT_THAT(s.message(), HasSubstr("variable x is used outside its scope"));
}

}  // namespace
}  // namespace tessel
