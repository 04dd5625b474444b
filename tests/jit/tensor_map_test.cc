// The host-side rules of TMA tensor maps (no GPU needed): every shape the
// copy engine cannot take is an InvalidArgument naming the rule.
#include "jit/tensor_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;

// A row-major f16 [M, K] tile source, boxes of 128 rows x 64 columns.
TensorMapSpec GemmOperand(uint64_t m = 4096, uint64_t k = 4096) {
  return {.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
          .dims = {k, m},
          .strides = {k * 2},
          .box = {64, 128},
          .swizzle = TmaSwizzle::k128B};
}

constexpr CUdeviceptr kBase = 0x7f0000000000;

absl::Status Check(const TensorMapSpec& s, CUdeviceptr base = kBase) {
  return ValidateTensorMap(s, base);
}

TEST(TensorMap, AcceptsGemmOperandsAndRaggedDims) {
  EXPECT_TRUE(Check(GemmOperand()).ok());
  // Dims need not be box multiples: the box's overhang is zero-filled.
  EXPECT_TRUE(Check(GemmOperand(4095, 4096)).ok());
  TensorMapSpec s = GemmOperand();
  s.dims = {100, 3};
  s.strides = {256};  // padded rows
  EXPECT_TRUE(Check(s).ok());
}

TEST(TensorMap, RejectsMisalignedBaseAndRows) {
  EXPECT_THAT(Check(GemmOperand(), kBase + 2).message(),
              HasSubstr("not 16-byte aligned"));
  // K = 4097 f16: rows of 8194 bytes cannot be TMA rows.
  EXPECT_THAT(Check(GemmOperand(4096, 4097)).message(),
              HasSubstr("not a multiple of 16"));
}

TEST(TensorMap, RejectsOverlappingStrides) {
  TensorMapSpec s = GemmOperand();
  s.strides = {4096};  // half a row
  EXPECT_THAT(Check(s).message(), HasSubstr("overlaps"));
  s = {.dims = {8, 4, 2}, .strides = {16, 16}, .box = {8, 4, 2}};
  EXPECT_THAT(Check(s).message(), HasSubstr("stride of dim 2"));
}

TEST(TensorMap, RejectsBoxesTheEngineCannotMove) {
  TensorMapSpec s = GemmOperand();
  s.box = {64, 512};
  EXPECT_THAT(Check(s).message(), HasSubstr("not in [1, 256]"));
  s.box = {128, 64};  // 256-byte rows under a 128-byte swizzle
  EXPECT_THAT(Check(s).message(), HasSubstr("wider than its 128-byte"));
  s.swizzle = TmaSwizzle::kNone;
  EXPECT_TRUE(Check(s).ok());
  s.box = {4, 64};  // 8-byte rows
  EXPECT_THAT(Check(s).message(), HasSubstr("not a multiple of 16"));
  s.box = {0, 64};
  EXPECT_THAT(Check(s).message(), HasSubstr("box extent 0 = 0"));
}

TEST(TensorMap, RejectsBadRanksAndCounts) {
  TensorMapSpec s;
  EXPECT_THAT(Check(s).message(), HasSubstr("rank 0"));
  s = {.dims = {8, 8, 8, 8, 8, 8},
       .strides = {16, 128, 1024, 8192, 65536},
       .box = {8, 8, 8, 8, 8, 8}};
  EXPECT_THAT(Check(s).message(), HasSubstr("rank 6"));
  s = GemmOperand();
  s.strides = {};
  EXPECT_THAT(Check(s).message(), HasSubstr("0 strides given"));
  s = GemmOperand();
  s.box = {64};
  EXPECT_THAT(Check(s).message(), HasSubstr("1 extents for rank 2"));
  s = GemmOperand();
  s.dims = {0, 8};
  EXPECT_THAT(Check(s).message(), HasSubstr("dim 0 = 0"));
  s.dims = {uint64_t{1} << 33, 8};
  s.strides = {uint64_t{1} << 34};
  EXPECT_THAT(Check(s).message(), HasSubstr("not in [1, 2^32]"));
}

TEST(TensorMap, ElementSizes) {
  EXPECT_EQ(TensorMapElementBytes(CU_TENSOR_MAP_DATA_TYPE_UINT8), 1);
  EXPECT_EQ(TensorMapElementBytes(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16), 2);
  EXPECT_EQ(TensorMapElementBytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32), 4);
  EXPECT_EQ(TensorMapElementBytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT64), 8);
  TensorMapSpec s = GemmOperand();
  s.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;  // packed 4-bit
  EXPECT_THAT(Check(s).message(), HasSubstr("no TMA mapping"));
}

TEST(TensorMap, CacheRefusesWhatValidationRefuses) {
  TensorMapCache cache;
  EXPECT_FALSE(cache.Get(GemmOperand(), kBase + 8).ok());
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tessel::jit
