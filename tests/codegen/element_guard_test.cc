// The boundary rule for global element accesses without a GPU: the
// interpreter reads 0 past a tensor's edge and skips stores and element
// atomics there (element_guard_cases.h), and the generated CUDA and PTX for
// sm_90a and sm_80 hold the same checks, where the ranges cannot prove the
// index inside, and no check where they can. The launches are
// element_guard_gpu_test.cc's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/interpret.h"
#include "tests/codegen/element_guard_cases.h"
#include "tests/common/count.h"
#include "tests/common/generated_code.h"

namespace tessel::testing {
namespace {

HostTensor Filled(std::vector<int64_t> shape, double first) {
  HostTensor t = *HostTensor::Create(DataType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_flat(i, first + i);
  return t;
}

TEST(ElementGuards, TheInterpreterReadsZerosAndSkipsStoresPastTheEdge) {
  absl::StatusOr<Program> program = RaggedElementsProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t M = 70;  // 3 blocks of 32 rows: the last one holds 6
  HostTensor x = Filled({M, 16}, 1), y = Filled({M, 16}, -1000);
  HostTensor edge = Filled({M}, -1000), count = Filled({M}, 0);
  ASSERT_TRUE(interpret(*program, {&x, &y, &edge, &count}).ok());
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t j = 0; j < 16; ++j) {
      const double above = r > 0 ? x.at({r - 1, j}) : 0.0;
      const double below = r + 1 < M ? x.at({r + 1, j}) : 0.0;
      EXPECT_EQ(y.at({r, j}), above + 2 * below) << r << ", " << j;
    }
  }
  // Edge[32 b] = X[32 b + 32, 0]: X[96, 0] is past the edge and reads 0.
  EXPECT_EQ(edge.at({0}), x.at({32, 0}));
  EXPECT_EQ(edge.at({32}), x.at({64, 0}));
  EXPECT_EQ(edge.at({64}), 0.0);
  EXPECT_EQ(edge.at({1}), -999.0);  // not written
  // Count[32 b + 40] += 1: only Count[40] is inside.
  for (int64_t i = 0; i < M; ++i) EXPECT_EQ(count.at({i}), i == 40 ? 41 : i);
}

TEST(ElementGuards, TheGeneratedCodeChecksWhatTheRangesCannotProve) {
  absl::StatusOr<Program> program = RaggedElementsProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    SCOPED_TRACE(t.arch());
    const GeneratedCode code = Generate(*program, t);
    const std::string& cu = code.cuda;
    // Row r - 1 of the Parallel loop: both sides checked; its row r + 1 and
    // the scalar statement's X[32 b + 32]: the end only. A masked read is 0.
    EXPECT_EQ(Count(cu, "- 1) >= 0) && "), 1) << cu;
    EXPECT_EQ(Count(cu, " : 0.0f)"), 3) << cu;
    EXPECT_EQ(Count(cu, "(((bx * 32) + 32) < M) ? X["), 1) << cu;
    // The Parallel loop's store past row M is skipped; Edge[32 b] needs no
    // check (b < ceildiv(M, 32)); the atomic past M is skipped.
    EXPECT_EQ(Count(cu, "Edge[(bx * 32)] = "), 1) << cu;
    EXPECT_EQ(Count(cu, "if (((bx * 32) < M))"), 0) << cu;
    EXPECT_EQ(Count(cu, "if (((tx == 0) && (((bx * 32) + 40) < M)))"), 1) << cu;
    // The PTX emitter spells this kernel: every global access but the
    // store to Edge is behind a branch on its check; the lower bound is
    // tested.
    ASSERT_FALSE(code.ptx.empty());
    const std::string& ptx = code.ptx;
    EXPECT_GT(Count(ptx, "setp.ge.s32"), 0) << ptx;
    const int accesses = Count(ptx, "ld.global") + Count(ptx, "st.global") +
                         Count(ptx, "red.global") + Count(ptx, "atom.global");
    EXPECT_GT(accesses, 0) << ptx;
    EXPECT_EQ(Count(ptx, "@!%p"), accesses - 1) << ptx;
  }
}

// Tile copies follow the same rule before row 0: block 0's halo reads
// zeros and its stores there are skipped, in the interpreter and in the
// generated code (a check of the row against 0 for each copy).
TEST(ElementGuards, CopiesBeforeRowZeroReadZerosAndSkipStores) {
  absl::StatusOr<Program> program = HaloCopyProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t M = 40;  // 2 blocks; the second one's rows pass M too
  HostTensor x = Filled({M, 16}, 1), y = Filled({M, 16}, -1000),
             z = Filled({M, 16}, -1000);
  ASSERT_TRUE(interpret(*program, {&x, &y, &z}).ok());
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t j = 0; j < 16; ++j) {
      // Y[r] = X[r - 8] (0 above row 0); Z[r] = X[r] for the rows the two
      // blocks store (-8..23, 24..55); no store reaches past M.
      EXPECT_EQ(y.at({r, j}), r >= 8 ? x.at({r - 8, j}) : 0.0) << r;
      EXPECT_EQ(z.at({r, j}), x.at({r, j})) << r;
    }
  }
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    SCOPED_TRACE(t.arch());
    const GeneratedCode code = Generate(*program, t);
    // X's load and Z's store; Y's rows start at 32 b.
    EXPECT_EQ(Count(code.cuda, "(tx / 4))) >= 0)"), 2) << code.cuda;
  }
}

TEST(ElementGuards, ProvableAccessesGetNoCheck) {
  absl::StatusOr<Program> program = ProvableElementsProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    SCOPED_TRACE(t.arch());
    const GeneratedCode code = Generate(*program, t);
    EXPECT_EQ(Count(code.cuda, "if ("), 0) << code.cuda;
    EXPECT_EQ(Count(code.cuda, " ? "), 0) << code.cuda;
    ASSERT_FALSE(code.ptx.empty());
    // The serial loop's entry test and back edge only.
    EXPECT_EQ(Count(code.ptx, "setp."), 2) << code.ptx;
    EXPECT_EQ(Count(code.ptx, "@!%p"), 0) << code.ptx;
  }
}

}  // namespace
}  // namespace tessel::testing
