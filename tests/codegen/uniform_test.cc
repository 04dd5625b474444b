// Block-uniform variables (T::alloc_uniform) without a GPU: the grouped
// rows of uniform_cases.h in the interpreter against a host loop, and the
// generated CUDA and PTX for sm_90a and sm_80 (one register every thread
// updates, the guard around the gemm, NVRTC / ptxas compile it). The
// launches are uniform_gpu_test.cc's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/interpret.h"
#include "tests/codegen/uniform_cases.h"
#include "tests/common/generated_code.h"

namespace tessel::testing {
namespace {

constexpr int kGroups = 5, kBlocks = 9;

// Out rows of blocks inside a group: X rows @ W[group]; others untouched
// (guarded) or zero.
HostTensor Expected(const std::vector<HostTensor>& a, bool guarded) {
  const HostTensor &x = a[0], &w = a[1], &offsets = a[2];
  HostTensor out = a[3];
  for (int b = 0; b < kBlocks; ++b) {
    int group = 0;
    while (group < kGroups && offsets.get_flat(group + 1) <= b * 64) ++group;
    if (group == kGroups && guarded) continue;
    for (int i = b * 64; i < b * 64 + 64; ++i) {
      for (int j = 0; j < 64; ++j) {
        double s = 0;
        for (int l = 0; l < 128 && group < kGroups; ++l)
          s += x.get_flat(i * 128 + l) * w.get_flat((group * 128 + l) * 64 + j);
        out.set_flat(i * 64 + j, s);
      }
    }
  }
  return out;
}

class UniformGuarded : public ::testing::TestWithParam<bool> {};

TEST_P(UniformGuarded, GroupedRowsRunInTheInterpreter) {
  const bool guarded = GetParam();
  absl::StatusOr<Program> program =
      GroupedRowsProgram(kGroups, kBlocks, guarded);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> a = MakeGroupedRowsArgs(kGroups, kBlocks);
  HostTensor want = Expected(a, guarded);
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : a) ptrs.push_back(&t);
  absl::Status s = interpret(*program, ptrs);
  ASSERT_TRUE(s.ok()) << s;
  int untouched = 0, bad = 0;
  for (int64_t i = 0; i < want.num_elements() && bad < 5; ++i) {
    untouched += want.get_flat(i) == -7.0;
    if (std::abs(a[3].get_flat(i) - want.get_flat(i)) >
        1e-3 * (1 + std::abs(want.get_flat(i)))) {
      ADD_FAILURE() << "element " << i << ": " << a[3].get_flat(i) << " vs "
                    << want.get_flat(i);
      ++bad;
    }
  }
  EXPECT_EQ(untouched, guarded ? 64 * 64 : 0);  // the last block's rows
}

// The variable is one register every thread assigns (no shared slot, no
// barrier); the gemm sits under its guard without the divergence error;
// W's copy, whose start reads it, is not issued ahead of its iteration
// (and is guarded: the group may be past W); X's is.
TEST_P(UniformGuarded, TheGroupIsARegisterAndCompiles) {
  const bool guarded = GetParam();
  absl::StatusOr<Program> program =
      GroupedRowsProgram(kGroups, kBlocks, guarded);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    SCOPED_TRACE(t.sm());
    const GeneratedCode code = Generate(*program, t);
    const std::string& cuda = code.cuda;
    EXPECT_NE(cuda.find("int group;"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("group = (i + 1);"), std::string::npos) << cuda;
    if (guarded) {
      EXPECT_NE(cuda.find("if ((group < 5))"), std::string::npos) << cuda;
    }
    // W's copy: a plain load in its iteration; X's: cp.async, one ahead.
    const size_t w = cuda.find("&W[((((group * 128)");
    ASSERT_NE(w, std::string::npos) << cuda;
    const size_t line = cuda.rfind('\n', w);
    EXPECT_EQ(cuda.substr(line, w - line).find("cp_async"), std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("tl::cp_async<16>((Xs_addr"), std::string::npos)
        << cuda;
    EXPECT_FALSE(code.ptx.empty());  // the PTX emitter spells the kernel
    ExpectCompilesBothWays(*program, t);
  }
}

INSTANTIATE_TEST_SUITE_P(Uniform, UniformGuarded, ::testing::Bool());

}  // namespace
}  // namespace tessel::testing
