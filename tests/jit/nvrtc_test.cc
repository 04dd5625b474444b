#include "jit/nvrtc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "jit/counters.h"
#include "jit/driver_api.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFile;
using testing::SaxpySource;
using ::testing::StartsWith;

TEST(NvrtcTest, CompilesForSm80AndSm90a) {
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    absl::StatusOr<Cubin> cubin = Compile(SaxpySource(), {.arch = arch});
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    EXPECT_GT(cubin->image.size(), 64u);
    EXPECT_THAT(cubin->image, StartsWith("\x7f"
                                         "ELF"));
    EXPECT_EQ(cubin->lowered_entry, "saxpy");
    EXPECT_EQ(cubin->arch, arch);
    EXPECT_GT(cubin->compile_ms, 0);
  }
}

TEST(NvrtcTest, CountsCompiles) {
  const uint64_t before = GetJitCounters().nvrtc_compiles;
  ASSERT_TRUE(Compile(SaxpySource(), {.arch = "sm_80"}).ok());
  EXPECT_EQ(GetJitCounters().nvrtc_compiles, before + 1);
}

TEST(NvrtcTest, TemplateEntryRecordsLoweredName) {
  CudaSource source{
      .text =
          "template <typename T>\n"
          "__global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n",
      .entry = "scale<float>"};
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_80"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_THAT(cubin->lowered_entry, StartsWith("_Z"));
  EXPECT_THAT(cubin->image, HasSubstr(cubin->lowered_entry));
}

TEST(NvrtcTest, HeadersTravelByContent) {
  CudaSource source{
      .text =
          "#include \"prelude.cuh\"\n"
          "#include <cuda_fp16.h>\n"
          "extern \"C\" __global__ void k(__half* x) {\n"
          "  x[0] = __float2half(kScale * __half2float(x[0]));\n"
          "}\n",
      .entry = "k",
      .headers = {{"prelude.cuh", "constexpr float kScale = 2.0f;\n"}}};
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_90a"});
  ASSERT_TRUE(cubin.ok()) << cubin.status();

  source.headers.clear();  // never searched for on disk
  EXPECT_FALSE(Compile(source, {.arch = "sm_90a"}).ok());
}

TEST(NvrtcTest, CcclHeadersAreFound) {
  CudaSource source{.text =
                        "#include <cuda/std/cstdint>\n"
                        "extern \"C\" __global__ void k(cuda::std::int32_t* "
                        "x) { x[0] = 1; }\n",
                    .entry = "k"};
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_90a"});
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

TEST(NvrtcTest, SyntaxErrorQuotesTheBadLine) {
  CudaSource source{.text =
                        "extern \"C\" __global__ void broken(float* y) {\n"
                        "  float x = 1.0f;\n"
                        "  y[0] = x +;\n"
                        "}\n",
                    .entry = "broken"};
  absl::StatusOr<Cubin> cubin =
      Compile(source, {.arch = "sm_80", .defines = {{"TILE", "64"}}});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(cubin.status().message());
  EXPECT_THAT(message, HasSubstr("broken.cu:3 |   y[0] = x +;"));
  EXPECT_THAT(message, HasSubstr("options: -arch=sm_80 -std=c++17 -DTILE=64"));
  EXPECT_THAT(message, HasSubstr("error"));  // the NVRTC log
  const size_t at = message.find("full source: ");
  ASSERT_NE(at, std::string::npos);
  const std::string path = message.substr(at + 13);
  EXPECT_EQ(ReadFile(path), source.text);
}

TEST(NvrtcTest, ErrorInHeaderQuotesTheHeaderLine) {
  CudaSource source{.text =
                        "#include \"bad.cuh\"\n"
                        "extern \"C\" __global__ void k() {}\n",
                    .entry = "k",
                    .headers = {{"bad.cuh", "// fine\nint oops = ;\n"}}};
  absl::StatusOr<Cubin> cubin = Compile(source, {.arch = "sm_80"});
  ASSERT_FALSE(cubin.ok());
  EXPECT_THAT(cubin.status().message(), HasSubstr("bad.cuh:2 | int oops = ;"));
}

TEST(NvrtcTest, OptionsNormalize) {
  CompileOptions a{.arch = "sm_90a",
                   .fast_math = true,
                   .defines = {{"B", "2"}, {"A", "1"}, {"FLAG", ""}}};
  CompileOptions b{.arch = "sm_90a",
                   .fast_math = true,
                   .defines = {{"FLAG", ""}, {"A", "1"}, {"B", "2"}}};
  EXPECT_EQ(NormalizedOptions(a, "sm_90a"), NormalizedOptions(b, "sm_90a"));
  EXPECT_THAT(
      NormalizedOptions(a, "sm_90a"),
      ::testing::ElementsAre("-arch=sm_90a", "-std=c++17", "--use_fast_math",
                             "-DA=1", "-DB=2", "-DFLAG"));
  b.lineinfo = true;
  EXPECT_NE(NormalizedOptions(a, "sm_90a"), NormalizedOptions(b, "sm_90a"));
}

// NVRTC would reuse a PCH across kernels whose headers share names.
TEST(NvrtcTest, RefusesPrecompiledHeaders) {
  for (const std::string flag :
       {"-pch", "--pch", "--use-pch=/tmp/x.pch", "-create-pch=x.pch",
        "--pch-dir=/tmp", "--instantiate-templates-in-pch=true"}) {
    absl::StatusOr<Cubin> cubin =
        Compile(SaxpySource(), {.arch = "sm_80", .extra = {flag}});
    ASSERT_FALSE(cubin.ok()) << flag;
    EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(cubin.status().message(), HasSubstr(flag));
    EXPECT_THAT(cubin.status().message(), HasSubstr("precompiled headers"));
  }
  EXPECT_TRUE(
      Compile(SaxpySource(), {.arch = "sm_80", .extra = {"-lineinfo"}}).ok());
}

TEST(NvrtcTest, RejectsVirtualOrMalformedArch) {
  for (const std::string arch : {"compute_90", "sm_", "sm90", "sm_9x"}) {
    absl::StatusOr<Cubin> cubin = Compile(SaxpySource(), {.arch = arch});
    ASSERT_FALSE(cubin.ok()) << arch;
    EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(NvrtcTest, EmptyArchWithoutGpuSaysHowToCompile) {
  if (Driver().ok()) GTEST_SKIP() << "a CUDA driver is present";
  absl::StatusOr<Cubin> cubin = Compile(SaxpySource(), {});
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kUnavailable);
  // In the words of tessel's users: a Target, or the tools' --arch.
  EXPECT_THAT(cubin.status().message(), HasSubstr("Target::cuda(\"sm_90a\")"));
  EXPECT_THAT(cubin.status().message(), HasSubstr("--arch"));
  EXPECT_THAT(cubin.status().message(), Not(HasSubstr("CompileOptions::arch")));
}

TEST(NvrtcTest, MissingEntryIsAnError) {
  CudaSource source = SaxpySource();
  source.entry = "";
  EXPECT_EQ(Compile(source, {.arch = "sm_80"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  source.entry = "not_there";
  EXPECT_FALSE(Compile(source, {.arch = "sm_80"}).ok());
}

TEST(NvrtcTest, CompilesInParallelThreads) {
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<Cubin>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([i, &results] {
      CudaSource source{.text = absl::StrCat(
                            "extern \"C\" __global__ void k", i,
                            "(float* x) { x[threadIdx.x] *= ", i, ".5f; }\n"),
                        .entry = absl::StrCat("k", i)};
      results[i] = Compile(source, {.arch = i % 2 ? "sm_80" : "sm_90a"});
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(results[i]->lowered_entry, absl::StrCat("k", i));
  }
}

}  // namespace
}  // namespace tessel::jit
