// The parameter count read from real NVRTC cubins, and nothing from bytes
// that are not one.
#include "jit/cubin_params.h"

#include <gtest/gtest.h>

#include "jit/nvrtc.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

size_t CountOf(const CudaSource& source, const std::string& arch) {
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = arch});
  EXPECT_TRUE(cubin.ok()) << cubin.status();
  if (!cubin.ok()) return 999;
  std::optional<size_t> count =
      CubinParamCount(cubin->image, cubin->lowered_entry);
  EXPECT_TRUE(count.has_value()) << source.entry << " " << arch;
  return count.value_or(998);
}

TEST(CubinParamsTest, CountsTheKernelsParameters) {
  for (const char* arch : {"sm_90a", "sm_80"}) {
    EXPECT_EQ(CountOf(testing::SaxpySource("params"), arch), 4u);
    EXPECT_EQ(CountOf({.text = "extern \"C\" __global__ void none() {}\n",
                       .entry = "none"},
                      arch),
              0u);
    EXPECT_EQ(CountOf({.text = "struct Big { float v[33]; };\n"
                               "extern \"C\" __global__ void by_value(\n"
                               "    Big b, char c, double* out) {\n"
                               "  *out = b.v[32] + c;\n"
                               "}\n",
                       .entry = "by_value"},
                      arch),
              3u);
  }
}

TEST(CubinParamsTest, UnknownWithoutTheEntryOrAnElf) {
  absl::StatusOr<Cubin> cubin =
      Compile(testing::SaxpySource("params"), {.arch = "sm_90a"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_FALSE(CubinParamCount(cubin->image, "other").has_value());
  EXPECT_FALSE(CubinParamCount("not an elf", "saxpy").has_value());
  for (size_t size : {0, 16, 64, 200}) {
    EXPECT_FALSE(
        CubinParamCount(cubin->image.substr(0, size), "saxpy").has_value())
        << size;
  }
}

}  // namespace
}  // namespace tessel::jit
