// Every public object, default-constructed or moved-from, answers with an
// empty value or a Status: never a crash (each of these used to SIGSEGV or
// read freed memory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Program Scale() {
  T::ProgramBuilder p("scale");
  auto x = p.tensor("x", {64}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 64});
    for (auto i : T::Parallel(64)) x(i) = x(i) * 2.0f;
  }
  absl::StatusOr<Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return *program;
}

void ExpectEmpty(const CompiledKernel& k) {
  EXPECT_FALSE(k.valid());
  EXPECT_EQ(k.name(), "");
  EXPECT_EQ(k.source(), "");
  EXPECT_EQ(k.entry(), "");
  EXPECT_EQ(k.lowered_ir(), "");
  EXPECT_EQ(k.arch(), "");
  EXPECT_EQ(k.threads(), 0);
  EXPECT_EQ(k.shared_memory_bytes(), 0);
  EXPECT_EQ(k.cubin_bytes(), 0u);
  EXPECT_STREQ(k.cache_origin(), "none");
  absl::Status s = k.launch({});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("empty kernel"));
}

TEST(EmptyObjectsTest, DefaultConstructedCompiledKernel) {
  ExpectEmpty(CompiledKernel());
}

TEST(EmptyObjectsTest, MovedFromCompiledKernel) {
  absl::StatusOr<CompiledKernel> k =
      compile(Scale(), {.target = Target::cpu()});
  ASSERT_TRUE(k.ok()) << k.status();
  CompiledKernel taken = *std::move(k);
  EXPECT_EQ(taken.name(), "scale");
  ExpectEmpty(*k);  // NOLINT(bugprone-use-after-move): what is tested
}

TEST(EmptyObjectsTest, MovedFromProgramIsStillTheProgram) {
  Program a = Scale();
  Program b = std::move(a);
  // NOLINTBEGIN(bugprone-use-after-move): what is tested
  EXPECT_EQ(a.name(), "scale");
  EXPECT_EQ(a.to_string(), b.to_string());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_TRUE(a == b);
  // NOLINTEND(bugprone-use-after-move)
  Program empty;
  EXPECT_EQ(empty.name(), "");
  EXPECT_FALSE(compile(empty, {.target = Target::cpu()}).ok());
}

TEST(EmptyObjectsTest, UndefinedBufferAndExpr) {
  Buffer b;
  EXPECT_FALSE(b.defined());
  EXPECT_EQ(b.name(), "");
  EXPECT_EQ(b.rank(), 0);
  EXPECT_THAT(b.shape(), IsEmpty());
  Expr e;
  EXPECT_EQ(e.to_string(), "<undefined>");
  // Used in a program: a Status from finish().
  T::ProgramBuilder p("undefined");
  auto x = p.tensor("x", {64}, T::f32);
  {
    T::Kernel kernel(1);
    T::copy(x, b);
  }
  EXPECT_FALSE(p.finish().ok());
}

TEST(EmptyObjectsTest, MovedFromHostTensorIsEmpty) {
  HostTensor t(DataType::kF16, {4, 8});
  t.fill(1.0);
  HostTensor taken = std::move(t);
  EXPECT_EQ(taken.num_elements(), 32);
  // NOLINTBEGIN(bugprone-use-after-move): what is tested
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.num_bytes(), 0u);
  EXPECT_THAT(t.to_doubles(), IsEmpty());
  EXPECT_TRUE(t.status().ok());
  HostTensor other(DataType::kF32, {2});
  other = std::move(taken);
  EXPECT_EQ(other.num_elements(), 32);
  EXPECT_EQ(taken.num_elements(), 0);
  EXPECT_THAT(taken.to_doubles(), IsEmpty());
  // NOLINTEND(bugprone-use-after-move)
}

TEST(EmptyObjectsTest, DefaultTargetIsAnError) {
  absl::StatusOr<CompiledKernel> k = compile(Scale(), {.target = Target()});
  EXPECT_FALSE(k.ok());
}

}  // namespace
}  // namespace tessel
