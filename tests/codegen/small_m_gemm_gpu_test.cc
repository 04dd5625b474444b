// Small-M gemms (src/passes/small_m_gemm.h) on the GPU against the
// interpreter: C = A B (and A B^T) at M = 1, 4, 8, 16, and a decode block
// (two gemms, reduce_max / reduce_sum rows, a row rescale) at M = 4, 8, 16,
// each on wgmma (sm_90a) and on mma.sync (the sm_80 path: disable_wgmma)
// where the GPU has them. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/codegen/small_m_cases.h"

namespace tessel::testing {
namespace {

HostTensor Random(DataType t, std::vector<int64_t> shape, uint32_t seed) {
  HostTensor x = *HostTensor::Create(t, std::move(shape));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.set_flat(i, (seed >> 8) / double(1 << 24) * 2.0 - 1.0);
  }
  return x;
}

// Inputs random; outputs filled with a sentinel, so that a padding row
// stored by mistake shows as a mismatch.
HostTensor Sentinel(std::vector<int64_t> shape) {
  HostTensor t = *HostTensor::Create(DataType::kF32, std::move(shape));
  for (int64_t e = 0; e < t.num_elements(); ++e) t.set_flat(e, -7.0);
  return t;
}

// A, B, C of SmallMGemmProgram.
std::vector<HostTensor> GemmArguments(const SmallMCase& c) {
  const int64_t N = int64_t{c.n} * c.blocks;
  std::vector<int64_t> b = c.transpose_b ? std::vector<int64_t>{N, c.k}
                                         : std::vector<int64_t>{c.k, N};
  return {Random(c.dtype, {c.m, c.k}, 1), Random(c.dtype, b, 2),
          Sentinel({c.m, N})};
}

// Q, K, V, O, L of SmallMDecodeProgram.
std::vector<HostTensor> DecodeArguments(const SmallMCase& c) {
  return {Random(c.dtype, {c.blocks, c.m, c.k}, 3),
          Random(c.dtype, {c.blocks, c.n, c.k}, 4),
          Random(c.dtype, {c.blocks, c.n, c.k}, 5),
          Sentinel({c.blocks, c.m, c.k}), Sentinel({c.blocks, c.m})};
}

void MatchesTheInterpreter(const absl::StatusOr<Program>& program,
                           std::vector<HostTensor> args, int outputs,
                           PassConfig config) {
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> want = args;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  absl::StatusOr<std::vector<HostTensor>> got =
      RunOnGpu(*program, args, config);
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t i = args.size() - outputs; i < args.size(); ++i) {
    int bad = 0;
    for (int64_t e = 0; e < want[i].num_elements(); ++e) {
      const double g = (*got)[i].get_flat(e), w = want[i].get_flat(e);
      if (!(std::fabs(g - w) <= 2e-3 + 2e-3 * std::fabs(w)) && bad++ < 5)
        ADD_FAILURE() << program->name() << " output " << i << " element " << e
                      << ": gpu " << g << ", interpreter " << w;
    }
    EXPECT_EQ(bad, 0) << program->name() << " output " << i;
  }
}

std::vector<PassConfig> Paths() {
  std::vector<PassConfig> paths{PassConfig{.disable_wgmma = true}};
  if (Target::detect().arch() == "sm_90a") paths.push_back(PassConfig{});
  return paths;
}

TEST(SmallMGemmGpu, GemmsMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  for (int m : {1, 4, 8, 16}) {
    for (bool tb : {false, true}) {
      for (const PassConfig& config : Paths()) {
        SCOPED_TRACE(
            absl::StrCat("m ", m, " transpose_b ", tb,
                         config.disable_wgmma ? " mma.sync" : " wgmma"));
        const SmallMCase c{.m = m, .transpose_b = tb};
        MatchesTheInterpreter(SmallMGemmProgram(c), GemmArguments(c), 1,
                              config);
      }
    }
  }
  const SmallMCase bf16{.m = 4, .transpose_b = true, .dtype = DataType::kBF16};
  MatchesTheInterpreter(SmallMGemmProgram(bf16), GemmArguments(bf16), 1, {});
}

TEST(SmallMGemmGpu, DecodeBlocksMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  for (int m : {4, 8, 16}) {
    for (DataType t : {DataType::kF16, DataType::kBF16}) {
      for (const PassConfig& config : Paths()) {
        SCOPED_TRACE(absl::StrCat(
            "m ", m, config.disable_wgmma ? " mma.sync" : " wgmma"));
        const SmallMCase c{.m = m, .dtype = t};
        MatchesTheInterpreter(SmallMDecodeProgram(c), DecodeArguments(c), 2,
                              config);
      }
    }
  }
}

}  // namespace
}  // namespace tessel::testing
