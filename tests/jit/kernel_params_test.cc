// The signature check at load asks the driver about each parameter: through
// a fake driver table, it must never make a failing call for a kernel whose
// signature is right (compute-sanitizer reports every failing API call), and
// must still catch a wrong count or size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "jit/launch.h"
#include "jit/loaded_module.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;

// The fake kernel's parameter sizes, and what the driver was asked.
std::vector<size_t> g_param_sizes;
int g_calls = 0;
int g_failed_calls = 0;

CUresult FakeParamInfo(CUfunction, size_t index, size_t* offset, size_t* size) {
  ++g_calls;
  if (index >= g_param_sizes.size()) {
    ++g_failed_calls;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *offset = 0;
  for (size_t i = 0; i < index; ++i) *offset += g_param_sizes[i];
  if (size != nullptr) *size = g_param_sizes[index];
  return CUDA_SUCCESS;
}

CUresult FakeParamCount(CUfunction, size_t* count) {
  ++g_calls;
  *count = g_param_sizes.size();
  return CUDA_SUCCESS;
}

class KernelParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_param_sizes = {8, 8, 4, 4};  // saxpy(const float*, float*, float, int)
    g_calls = g_failed_calls = 0;
    api_.cuFuncGetParamInfo = &FakeParamInfo;
  }

  absl::Status Check(KernelSignature signature,
                     std::optional<size_t> cubin_count = std::nullopt) {
    auto module = std::make_shared<internal::LoadedModule>();
    module->cubin_param_count = cubin_count;
    module->api = &api_;
    module->function = reinterpret_cast<CUfunction>(0x1234);
    module->entry = "saxpy";
    return LoadKernelFromModule(std::move(module), std::move(signature))
        .status();
  }

  DriverApi api_;
  const KernelSignature saxpy_ = {ArgSpec::Pointer(), ArgSpec::Pointer(),
                                  ArgSpec::F32(), ArgSpec::I32()};
};

TEST_F(KernelParamsTest, RightSignatureMakesNoFailingCall) {
  EXPECT_TRUE(Check(saxpy_).ok());
  EXPECT_EQ(g_failed_calls, 0);
  EXPECT_EQ(g_calls, 4);
}

TEST_F(KernelParamsTest, WrongSizeIsAnError) {
  absl::Status s = Check(
      {ArgSpec::Pointer(), ArgSpec::Pointer(), ArgSpec::F64(), ArgSpec::I32()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameter 2 is 4 bytes"));
  EXPECT_EQ(g_failed_calls, 0);
}

TEST_F(KernelParamsTest, TooLongASignatureIsAnError) {
  KernelSignature longer = saxpy_;
  longer.push_back(ArgSpec::I32());
  absl::Status s = Check(longer);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("takes 4 parameters"));
}

TEST_F(KernelParamsTest, NoParamInfoInTheDriverSkipsTheCheck) {
  api_.cuFuncGetParamInfo = nullptr;
  EXPECT_TRUE(Check(saxpy_).ok());
  EXPECT_EQ(g_calls, 0);
}

// With cuFuncGetParamCount (newer drivers) a kernel taking more parameters
// than declared is caught too, still without a failing call.
TEST_F(KernelParamsTest, ParamCountCatchesATooShortSignature) {
  api_.cuFuncGetParamCount = &FakeParamCount;
  EXPECT_TRUE(Check(saxpy_).ok());
  EXPECT_EQ(g_calls, 5);
  KernelSignature shorter = saxpy_;
  shorter.pop_back();
  absl::Status s = Check(shorter);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("takes 4 parameters"));
  KernelSignature longer = saxpy_;
  longer.push_back(ArgSpec::I32());
  EXPECT_THAT(Check(longer).message(), HasSubstr("takes 4 parameters"));
  EXPECT_EQ(g_failed_calls, 0);
}

// Without it, the count read from the cubin does the same.
TEST_F(KernelParamsTest, CubinCountCatchesATooShortSignature) {
  EXPECT_TRUE(Check(saxpy_, 4).ok());
  KernelSignature shorter = saxpy_;
  shorter.pop_back();
  EXPECT_THAT(Check(shorter, 4).message(), HasSubstr("takes 4 parameters"));
  EXPECT_EQ(g_failed_calls, 0);
}

}  // namespace
}  // namespace tessel::jit
