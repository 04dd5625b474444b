// tessel-aot's code generator on hand-made plans (no compile): the text
// depends only on its inputs, user names become safe C++ names, and kernels
// it cannot describe are refused.
#include "tools/aot/aot_codegen.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

runtime::AotKernelPlan Plan(const std::string& arch,
                            const std::string& tensor) {
  runtime::AotKernelPlan p;
  p.name = "scale";
  p.arch = arch;
  p.cubin = std::string(
      "\x7f"
      "ELF\0\x01",
      6);
  p.entry = "scale_kernel";
  p.params.push_back({.name = tensor,
                      .dtype = DataType::kF32,
                      .shape = {{.kind = runtime::AotDim::Kind::kSize}},
                      .expected = "f32[N]"});
  p.sizes = {"N"};
  p.grid = {"tessel::aot::CeilDiv(tessel_d0, int64_t{256})", "int64_t{1}",
            "int64_t{1}"};
  p.threads = 256;
  p.kernel_params = 2;
  return p;
}

TEST(AotCodegen, TheSameInputsGiveTheSameText) {
  const AotKernel k{.function = "scale", .variants = {Plan("sm_90a", "X")}};
  absl::StatusOr<AotSources> a = GenerateAotSources({k}, {.header = "k"});
  absl::StatusOr<AotSources> b = GenerateAotSources({k}, {.header = "k"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->header, b->header);
  EXPECT_EQ(a->source, b->source);
  EXPECT_THAT(a->header,
              HasSubstr("tessel::aot::Status scale(const tessel::aot::Tensor& "
                        "X, CUstream_st* stream = nullptr);"));
  EXPECT_THAT(a->source, HasSubstr("0x7f,0x45,0x4c,0x46,0x00,0x01,"));
}

TEST(AotCodegen, TensorNamesBecomeSafeCppNames) {
  EXPECT_EQ(CppIdentifier("my-tensor"), "my_tensor");
  EXPECT_EQ(CppIdentifier("2x"), "t_2x");
  EXPECT_EQ(CppIdentifier("new"), "new_");
  EXPECT_EQ(CppIdentifier("stream"), "stream_");
  EXPECT_EQ(CppIdentifier("tessel_grid"), "tessel_grid_");  // a local's
  const AotKernel k{.function = "scale",
                    .variants = {Plan("sm_90a", "stream")}};
  absl::StatusOr<AotSources> out = GenerateAotSources({k}, {.header = "k"});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(out->header, HasSubstr("const tessel::aot::Tensor& stream_, "
                                     "CUstream_st* stream"));
  // Messages keep the user's own name.
  EXPECT_THAT(out->source, HasSubstr("\"stream\", \"f32[N]\", stream_"));
}

TEST(AotCodegen, VariantsMustTakeTheSameTensors) {
  const AotKernel k{.function = "scale",
                    .variants = {Plan("sm_90a", "X"), Plan("sm_80", "Y")}};
  absl::StatusOr<AotSources> out = GenerateAotSources({k}, {.header = "k"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("scale: its sm_90a and sm_80 programs take different "
                        "tensors"));
}

TEST(AotCodegen, TwoFunctionsOfOneNameAreRefused) {
  const AotKernel k{.function = "scale", .variants = {Plan("sm_90a", "X")}};
  absl::StatusOr<AotSources> out = GenerateAotSources({k, k}, {.header = "k"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("two kernels are both named"));
}

TEST(AotCodegen, TheNamespaceWrapsTheFunctions) {
  const AotKernel k{.function = "scale", .variants = {Plan("sm_90a", "X")}};
  absl::StatusOr<AotSources> out =
      GenerateAotSources({k}, {.header = "k", .name_space = "app::gpu"});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(out->header, HasSubstr("namespace app::gpu {"));
  EXPECT_THAT(out->header, Not(HasSubstr("namespace {")));
}

}  // namespace
}  // namespace tessel::tools
