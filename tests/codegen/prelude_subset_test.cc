// The per-kernel prelude: which parts a kernel gets, and that NVRTC compiles
// a kernel with only those for sm_80 and sm_90a.
#include "src/codegen/prelude_subset.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/nvrtc.h"
#include "src/codegen/prelude.h"

namespace tessel::codegen {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Umbrella(const std::vector<jit::CudaHeader>& headers) {
  for (const jit::CudaHeader& h : headers) {
    if (h.name == "tessel_prelude.cuh") return h.content;
  }
  return "";
}

TEST(PreludeSubsetTest, AKernelGetsThePartsItNames) {
  const std::string text =
      "#include \"tessel_prelude.cuh\"\n"
      "extern \"C\" __global__ void k(const float* x) {\n"
      "  __shared__ float s[4];\n"
      "  tl::cp_async<16>(tl::smem_addr(s), x); tl::cp_async_commit();\n"
      "}\n";
  const std::vector<std::string> parts = PreludePartsFor(text);
  EXPECT_THAT(parts, Contains("copy_async.cuh"));
  EXPECT_THAT(parts, Contains("types.cuh"));
  EXPECT_THAT(parts, Not(Contains("wgmma.cuh")));
  EXPECT_THAT(parts, Not(Contains("mma.cuh")));
  // tl::smem_addr (types.cuh) is called by many parts but declared by one.
  EXPECT_THAT(parts, Not(Contains("ldmatrix.cuh")));
  const std::string umbrella = Umbrella(PreludeHeadersFor(text));
  EXPECT_THAT(umbrella, HasSubstr("#include \"copy_async.cuh\""));
  EXPECT_THAT(umbrella, Not(HasSubstr("#include \"wgmma.cuh\"")));
  EXPECT_THAT(umbrella, Not(HasSubstr("#include <cuda_fp8.h>")));
  EXPECT_THAT(umbrella, HasSubstr("namespace tl = tessel::dev;"));
}

TEST(PreludeSubsetTest, NamesNoPartUsesGiveTypesOnly) {
  EXPECT_THAT(PreludePartsFor("extern \"C\" __global__ void k() {}"),
              ElementsAre("types.cuh"));
  EXPECT_THAT(PreludePartsFor("tl::no_such_helper(); xtl::cp_async();"),
              ElementsAre("types.cuh"));
}

// Every part that declares a name comes along, so overload resolution sees
// every overload it sees with the whole prelude.
TEST(PreludeSubsetTest, EveryDeclaringPartOfANameComesAlong) {
  for (const jit::CudaHeader& h : PreludeHeaders()) {
    if (h.name == "tessel_prelude.cuh") continue;
    // "name(" after __device__ on one line: the common shape of a
    // declaration; each such name must bring its part.
    size_t at = 0;
    while ((at = h.content.find("__device__", at)) != std::string::npos) {
      const size_t open = h.content.find('(', at);
      const size_t line_end = h.content.find('\n', at);
      at += 10;
      if (open == std::string::npos || open > line_end) continue;
      size_t begin = open;
      while (begin > 0 && (std::isalnum(h.content[begin - 1]) ||
                           h.content[begin - 1] == '_')) {
        --begin;
      }
      const std::string name = h.content.substr(begin, open - begin);
      if (name.empty() || name == "operator") continue;
      EXPECT_THAT(PreludePartsFor("tl::" + name + "(x);"), Contains(h.name))
          << name << " of " << h.name;
    }
  }
}

// A name the scan cannot see declared (a macro) brings every part that
// mentions it.
TEST(PreludeSubsetTest, MacrosBringThePartsThatMentionThem) {
  EXPECT_THAT(PreludePartsFor("#if TESSEL_HAS_STMATRIX\n#endif\n"),
              Contains("ldmatrix.cuh"));
}

TEST(PreludeSubsetTest, Fp8OnlyForKernelsThatNameIt) {
  const std::string fp8 =
      Umbrella(PreludeHeadersFor("__global__ void k(__nv_fp8_e4m3* p) { p[0] = "
                                 "__nv_fp8_e4m3(1.0f); }"));
  EXPECT_THAT(fp8, HasSubstr("#include <cuda_fp8.h>"));
  // The whole prelude keeps it for those who include it without a subset.
  EXPECT_THAT(Umbrella(PreludeHeaders()), HasSubstr("#include <cuda_fp8.h>"));
}

// A subset lists only the parts a kernel names, so each part must compile
// on its own: it includes what it uses.
TEST(PreludeSubsetTest, EveryPartCompilesAlone) {
  for (const jit::CudaHeader& h : PreludeHeaders()) {
    const std::string text = "#include \"" + h.name +
                             "\"\n"
                             "extern \"C\" __global__ void k() {}\n";
    for (const char* arch : {"sm_80", "sm_90a"}) {
      jit::CudaSource source{
          .text = text, .entry = "k", .headers = PreludeHeaders()};
      absl::StatusOr<jit::Cubin> cubin = jit::Compile(source, {.arch = arch});
      EXPECT_TRUE(cubin.ok())
          << h.name << " " << arch << ": " << cubin.status();
    }
  }
}

// The subset is enough for NVRTC: a kernel using several parts, and one
// storing fp8, compile for both archs with only their parts.
TEST(PreludeSubsetTest, KernelsCompileWithTheirSubset) {
  const std::string kernels[] = {
      "#include \"tessel_prelude.cuh\"\n"
      "extern \"C\" __global__ void k(const tl::f16* x, float* y) {\n"
      "  __shared__ alignas(16) tl::f16 s[64];\n"
      "  tl::cp_async<16>(tl::smem_addr(s) + 16 * (threadIdx.x % 4),\n"
      "                   x + 8 * (threadIdx.x % 4));\n"
      "  tl::cp_async_commit(); tl::cp_async_wait<0>(); __syncthreads();\n"
      "  y[threadIdx.x] = tl::max(static_cast<float>(s[threadIdx.x % 64]),\n"
      "                           0.0f);\n"
      "}\n",
      "#include \"tessel_prelude.cuh\"\n"
      "extern \"C\" __global__ void k(__nv_fp8_e4m3* y, const float* x) {\n"
      "  y[threadIdx.x] = __nv_fp8_e4m3(x[threadIdx.x]);\n"
      "}\n"};
  for (const std::string& text : kernels) {
    for (const char* arch : {"sm_80", "sm_90a"}) {
      jit::CudaSource source{
          .text = text, .entry = "k", .headers = PreludeHeadersFor(text)};
      absl::StatusOr<jit::Cubin> cubin = jit::Compile(source, {.arch = arch});
      EXPECT_TRUE(cubin.ok()) << arch << ": " << cubin.status();
    }
  }
}

}  // namespace
}  // namespace tessel::codegen
