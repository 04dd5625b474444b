// Sizes in environment variables: plain bytes or K/M/G (powers of 1024).
#include "jit/byte_size.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <string>

namespace tessel::jit {
namespace {

TEST(ByteSizeTest, ParsesBytesAndBinarySuffixes) {
  EXPECT_EQ(ParseByteSize("1073741824"), uint64_t{1} << 30);
  EXPECT_EQ(ParseByteSize(" 512M "), uint64_t{512} << 20);
  EXPECT_EQ(ParseByteSize("2g"), uint64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("64K"), uint64_t{64} << 10);
  EXPECT_EQ(ParseByteSize(""), std::nullopt);
  EXPECT_EQ(ParseByteSize("M"), std::nullopt);
  EXPECT_EQ(ParseByteSize("-1"), std::nullopt);
  EXPECT_EQ(ParseByteSize("12X"), std::nullopt);
  EXPECT_EQ(ParseByteSize("99999999999999999G"), std::nullopt);  // > 2^64
}

TEST(ByteSizeTest, EnvFallsBackWhenUnsetOrNotASize) {
  const char* name = "TESSEL_BYTE_SIZE_TEST_VARIABLE";
  unsetenv(name);
  EXPECT_EQ(ByteSizeFromEnv(name, 7), 7u);
  setenv(name, "3M", 1);
  EXPECT_EQ(ByteSizeFromEnv(name, 7), uint64_t{3} << 20);
  setenv(name, "lots", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ByteSizeFromEnv(name, 7), 7u);
  EXPECT_EQ(ByteSizeFromEnv(name, 7), 7u);
  std::string warned = ::testing::internal::GetCapturedStderr();
  // One warning, not one per cache that reads the variable.
  EXPECT_NE(warned.find("=lots is not a size"), std::string::npos) << warned;
  EXPECT_EQ(warned.find("is not a size"), warned.rfind("is not a size"));
  unsetenv(name);
}

}  // namespace
}  // namespace tessel::jit
