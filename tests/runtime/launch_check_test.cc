// launch() checks tensors against the parameters before touching a device,
// so these run without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

CompiledKernel Gemm(bool symbolic) {
  absl::StatusOr<CompiledKernel> k = compile(
      testing::Gemm({.m = 4096, .n = 4096, .k = 4096, .symbolic = symbolic}),
      {.target = Target::sm90a()});
  EXPECT_TRUE(k.ok()) << k.status();
  return *k;
}

TEST(Launch, WrongDtypeNamesTheParameter) {
  CompiledKernel k = Gemm(false);
  TensorView a = TensorView::Contiguous(uint64_t{256}, f32, {4096, 4096});
  TensorView b = TensorView::Contiguous(uint64_t{256}, f16, {4096, 4096});
  absl::Status s = k.launch({a, b, b});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("A: expected f16[4096,4096], got f32[4096,4096]"));
}

TEST(Launch, WrongCount) {
  absl::Status s = Gemm(false).launch({});
  EXPECT_THAT(s.message(), HasSubstr("expected 3 tensors (A, B, C), got 0"));
}

TEST(Launch, SymbolicSizesMustAgree) {
  CompiledKernel k = Gemm(true);
  TensorView a = TensorView::Contiguous(uint64_t{256}, f16, {512, 256});
  TensorView b = TensorView::Contiguous(uint64_t{256}, f16, {128, 64});
  TensorView c = TensorView::Contiguous(uint64_t{256}, f16, {512, 64});
  absl::Status s = k.launch({a, b, c});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("B: expected f16[K,N], got f16[128,64]"));
}

TEST(Launch, OverlappingStridesAreRejected) {
  CompiledKernel k = Gemm(false);
  TensorView a{256, f16, {4096, 4096}, {1, 1}};
  TensorView b = TensorView::Contiguous(uint64_t{256}, f16, {4096, 4096});
  absl::Status s = k.launch({a, b, b});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("A f16[4096,4096] with strides [1,1]: "
                                     "dimensions 0 and 1 overlap"));
}

// Rows that miss the alignment of the kernel's vector copies (K = 250 of
// f16, a slice with row stride 260) are no longer refused: the launch runs
// a variant that moves those views one element at a time
// (strided_view_test.cc, UnalignedGemmViewsRunElementByElement).

}  // namespace
}  // namespace tessel
