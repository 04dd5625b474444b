// Strided TensorViews without a GPU: Target::cpu() honors them (a column
// slice and a transposed view give exactly what the same kernel gives on
// row-major copies), and the CUDA variants a strided launch compiles
// (strided_views.h) build for sm_90a and sm_80, TMA kept for unit innermost
// strides and dropped for the others, the row-major kernel untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "src/runtime/kernel_impl.h"
#include "src/runtime/lower.h"
#include "src/runtime/strided_views.h"
#include "tests/codegen/test_programs.h"
#include "tests/runtime/strided_programs.h"

namespace tessel::strided_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CompiledKernel Compile(const Program& program, const Target& target) {
  absl::StatusOr<CompiledKernel> k = compile(program, {.target = target});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel();
}

// A (a column slice) x B (a transposed tensor) into C (a column slice of a
// wider output), against the same kernel on row-major copies: the
// interpreter runs both, so they agree exactly; C's other columns keep
// their value.
TEST(StridedViewCpu, GemmOfAColumnSliceAndATransposedView) {
  const int64_t m = 48, n = 40, k = 56;  // ragged for 64x64x32 tiles
  CompiledKernel kernel = Compile(Gemm(), Target::cpu());
  HostTensor wide_a = Random(f16, {m, 80}, 1);  // A: columns [8, 8 + k)
  HostTensor b_t = Random(f16, {n, k}, 2);      // B = b_t^T
  HostTensor wide_c(f32, {m, n + 9});           // C: columns [4, 4 + n)
  wide_c.fill(7.0);
  const View2 a = Columns(wide_a, 8, k), b = Transposed(b_t),
              c = Columns(wide_c, 4, n);
  ASSERT_TRUE(
      kernel
          .launch({HostView(wide_a, a), HostView(b_t, b), HostView(wide_c, c)})
          .ok());

  HostTensor a_copy = Gather(wide_a, a), b_copy = Gather(b_t, b);
  HostTensor c_copy(f32, {m, n});
  ASSERT_TRUE(
      kernel.launch({Whole(a_copy), Whole(b_copy), Whole(c_copy)}).ok());
  EXPECT_TRUE(testing::AllClose(Gather(wide_c, c), c_copy, 0, 0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j : {0, 1, 2, 3, 44, 45, 46, 47, 48}) {
      ASSERT_EQ(wide_c.get_flat(i * (n + 9) + j), 7.0) << i << ", " << j;
    }
  }
}

TEST(StridedViewCpu, ElementwiseOfATransposedView) {
  CompiledKernel kernel = Compile(Scale(), Target::cpu());
  HostTensor x_t = Random(f16, {70, 45}, 3);  // X = x_t^T: [45, 70]
  HostTensor y(f32, {45, 70}), y_copy(f32, {45, 70});
  ASSERT_TRUE(kernel.launch({HostView(x_t, Transposed(x_t)), Whole(y)}).ok());
  HostTensor x_copy = Gather(x_t, Transposed(x_t));
  ASSERT_TRUE(kernel.launch({Whole(x_copy), Whole(y_copy)}).ok());
  EXPECT_TRUE(testing::AllClose(y, y_copy, 0, 0));
  EXPECT_EQ(y.get_flat(1), 2 * x_t.get_flat(45) + 1);  // Y[0, 1] = X_t[1, 0]
}

TEST(StridedViewCpu, PatternNamesEachView) {
  const uint64_t p = 256;
  EXPECT_EQ(runtime::StridePattern({TensorView{p, f16, {4, 8}, {}},
                                    TensorView{p, f16, {4, 8}, {8, 1}},
                                    TensorView{p, f16, {4, 8}, {16, 1}},
                                    TensorView{p, f16, {4, 8}, {1, 4}},
                                    TensorView{p, f16, {4, 1}, {3, 5}}}),
            "ccusu");
}

// The variants a strided launch compiles, for both archs, without a GPU.
class StridedVariantCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(StridedVariantCompile, CompilesWithStrideParameters) {
  const Target target =
      GetParam() == "sm_90a" ? Target::sm90a() : Target::sm80();
  const Program program = Gemm();
  CompiledKernel row_major = Compile(program, target);
  EXPECT_THAT(row_major.source(), Not(HasSubstr("_stride")));

  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> sliced =
      runtime::CompileStridedVariant(program.ir(), {.target = target}, "ucu");
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  const runtime::KernelImpl& u = **sliced;
  // Row strides are parameters; the unit innermost strides are constants.
  EXPECT_THAT(u.source, HasSubstr("const int A_stride0"));
  EXPECT_THAT(u.source, HasSubstr("const int C_stride0"));
  EXPECT_THAT(u.source, Not(HasSubstr("A_stride1")));
  EXPECT_EQ(u.dims.size(), program.ir().dims.size() + 2);
  ASSERT_EQ(u.stride_params.size(), 2u);
  EXPECT_EQ(u.stride_params[0].param, 0);
  EXPECT_EQ(u.stride_params[1].param, 2);

  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> transposed =
      runtime::CompileStridedVariant(program.ir(), {.target = target}, "csc");
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  const runtime::KernelImpl& s = **transposed;
  EXPECT_THAT(s.source, HasSubstr("const int B_stride0"));
  EXPECT_THAT(s.source, HasSubstr("const int B_stride1"));
  // TMA: where the row-major kernel maps A and B, the column slice keeps
  // its map and the transposed view has none.
  auto maps = [](const runtime::KernelImpl& k, int param) {
    int n = 0;
    for (const passes::TensorMapParam& m : k.tensor_maps) n += m.param == param;
    return n;
  };
  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> contiguous =
      runtime::CompileStridedVariant(program.ir(), {.target = target}, "ccc");
  ASSERT_TRUE(contiguous.ok()) << contiguous.status();
  EXPECT_EQ((*contiguous)->source, row_major.source());
  EXPECT_EQ(maps(u, 0), maps(**contiguous, 0));
  EXPECT_EQ(maps(s, 1), 0);
  if (target.sm() >= 90) {
    EXPECT_EQ(maps(**contiguous, 1), 1);
  }
}

// Symbolic sizes make alignment a property of the launch: row-major views
// whose rows are not whole vectors (N = 243 f16) run a variant moving that
// view one element at a time, not a refusal; aligned ones run the kernel.
TEST_P(StridedVariantCompile, UnalignedRowsRunElementByElement) {
  const Target target =
      GetParam() == "sm_90a" ? Target::sm90a() : Target::sm80();
  const Program program = Scale();
  const CompileOptions options{.target = target};
  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> k =
      runtime::CompileCuda(program.ir(), options);
  ASSERT_TRUE(k.ok()) << k.status();
  (*k)->program = std::make_shared<const ir::Program>(program.ir());
  (*k)->options = options;
  (*k)->specializations = std::make_shared<runtime::StridedSpecializations>();
  ASSERT_FALSE((*k)->alignment.empty()) << "the kernel copies in vectors";

  const uint64_t p = 4096;  // 16-byte aligned; nothing is launched
  auto views = [&](int64_t n) {
    return std::vector<TensorView>{TensorView{p, f16, {64, n}, {}},
                                   TensorView{p, f32, {64, n}, {}}};
  };
  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> aligned =
      runtime::VariantForViews(**k, views(256));
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, nullptr);  // the kernel itself

  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> ragged =
      runtime::VariantForViews(**k, views(243));
  ASSERT_TRUE(ragged.ok()) << ragged.status();
  ASSERT_NE(*ragged, nullptr);
  // X's vector loads become element loads; Y's stores were scalar already.
  EXPECT_THAT((*ragged)->source, HasSubstr("const int X_stride1"));
  EXPECT_THAT((*ragged)->source, Not(HasSubstr("Y_stride")));
  EXPECT_TRUE((*ragged)->alignment.empty());
  absl::StatusOr<runtime::SizeBindings> sizes =
      runtime::CheckTensors(**ragged, views(243));
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  runtime::BindStrides(**ragged, views(243), *sizes);
  ASSERT_EQ((*ragged)->stride_params.size(), 1u);
  const runtime::StrideParam& x = (*ragged)->stride_params[0];
  EXPECT_EQ(sizes->at(x.strides[0].get()), 243);  // row-major, implied
  EXPECT_EQ(sizes->at(x.strides[1].get()), 1);
  // An offset pointer (two f16 elements in) is the same case, and the
  // variant is the one compiled above.
  std::vector<TensorView> shifted = views(256);
  shifted[0].data += 4;
  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> again =
      runtime::VariantForViews(**k, shifted);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *ragged);
}

// The gemm's A with K = 250 (rows not whole 8-element vectors), and a
// column slice of A with row stride 260: each such view goes element by
// element; C, aligned, keeps its vector stores.
TEST_P(StridedVariantCompile, UnalignedGemmViewsRunElementByElement) {
  const Target target =
      GetParam() == "sm_90a" ? Target::sm90a() : Target::sm80();
  const CompileOptions options{.target = target};
  const ir::Program program =
      testing::Gemm({.m = 4096, .n = 4096, .k = 4096, .symbolic = true});
  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> k =
      runtime::CompileCuda(program, options);
  ASSERT_TRUE(k.ok()) << k.status();
  (*k)->program = std::make_shared<const ir::Program>(program);
  (*k)->options = options;
  (*k)->specializations = std::make_shared<runtime::StridedSpecializations>();
  const uint64_t p = 4096;
  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> ragged_k =
      runtime::VariantForViews(**k, {TensorView{p, f16, {512, 250}, {}},
                                     TensorView{p, f16, {250, 64}, {}},
                                     TensorView{p, f16, {512, 64}, {}}});
  ASSERT_TRUE(ragged_k.ok()) << ragged_k.status();
  ASSERT_NE(*ragged_k, nullptr);
  EXPECT_THAT((*ragged_k)->source, HasSubstr("const int A_stride1"));
  EXPECT_THAT((*ragged_k)->source, Not(HasSubstr("B_stride")));  // 64 wide
  EXPECT_THAT((*ragged_k)->source, Not(HasSubstr("C_stride")));
  absl::StatusOr<std::shared_ptr<const runtime::KernelImpl>> slice =
      runtime::VariantForViews(**k, {TensorView{p, f16, {512, 256}, {260, 1}},
                                     TensorView{p, f16, {256, 64}, {}},
                                     TensorView{p, f16, {512, 64}, {}}});
  ASSERT_TRUE(slice.ok()) << slice.status();
  ASSERT_NE(*slice, nullptr);
  EXPECT_THAT((*slice)->source, HasSubstr("const int A_stride1"));
  EXPECT_THAT((*slice)->source, Not(HasSubstr("B_stride")));
  EXPECT_TRUE(
      runtime::CheckTensors(**slice, {TensorView{p, f16, {512, 256}, {260, 1}},
                                      TensorView{p, f16, {256, 64}, {}},
                                      TensorView{p, f16, {512, 64}, {}}})
          .ok());
}

INSTANTIATE_TEST_SUITE_P(Archs, StridedVariantCompile,
                         ::testing::Values("sm_90a", "sm_80"));

}  // namespace
}  // namespace tessel::strided_test
