// Row reductions of register tiles without a GPU: every case of
// row_reduce_cases.h lowers to thread-local combines, warp shuffles of the
// width its layout gives a row, shared memory only across warps, and
// 16-byte row copies; NVRTC compiles it for sm_80 and sm_90a. Bad shapes
// stay statuses. The launches are row_reduce_gpu_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "tessel/compile.h"
#include "tests/codegen/row_reduce_cases.h"

namespace tessel::testing {
namespace {

class RowReduce : public ::testing::TestWithParam<RowCase> {};

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST_P(RowReduce, LowersToShufflesAndCompiles) {
  const RowCase& c = GetParam();
  absl::StatusOr<Program> program = RowReduceProgram(c);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    absl::StatusOr<CompiledKernel> k = compile(*program, {.target = t});
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string& src = k->source();
    std::string kind = c.kind;
    if (kind == "abssum") kind = "sum";
    if (kind == "absmax") kind = "max";
    EXPECT_TRUE(Has(src, absl::StrCat("tl::warp_reduce_", kind, "<",
                                      std::min(c.group, 32), ">(")))
        << src;
    // Shared memory only for rows that span warps.
    EXPECT_EQ(Has(src, "red_scratch"), c.group > 32) << src;
    // No thread walks a row serially (the staged generic reduce).
    EXPECT_FALSE(Has(src, "for (int k = 0;")) << src;
    const int vec = c.dtype == DataType::kF32 ? 4 : 8;
    EXPECT_TRUE(Has(src, absl::StrCat("tl::load_vec<", vec, ">("))) << src;
    EXPECT_TRUE(Has(src, absl::StrCat("tl::store_vec<", vec, ">("))) << src;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RowReduce, ::testing::ValuesIn(RowCases()),
                         [](const auto& info) { return info.param.name; });

// A row reduce into a fragment of another shape is the user's mistake.
TEST(RowReduceErrors, MismatchedRowsAreAStatus) {
  namespace T = tessel;
  T::ProgramBuilder p("bad_rows");
  auto X = p.tensor("X", {8, 64}, DataType::kF16);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto x = T::alloc_fragment({8, 64}, DataType::kF32, "x");
    auto r = T::alloc_fragment({4}, DataType::kF32, "r");
    T::copy(X(0, 0), x);
    T::reduce_sum(x, r, {.dim = 1});
  }
  absl::StatusOr<Program> program = p.finish();
  EXPECT_FALSE(program.ok());
}

}  // namespace
}  // namespace tessel::testing
