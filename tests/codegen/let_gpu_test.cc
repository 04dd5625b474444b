// Block-uniform scalars on the GPU: the paged gather (a let page in a TMA
// or cp.async copy start, a let page count as the Pipelined extent, a let
// guard around the store) and the guarded gemm of let_cases.h, against the
// interpreter. With TESSEL_PTX=0 the same through NVRTC.
#include <gtest/gtest.h>

#include <vector>

#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/let_cases.h"
#include "tests/codegen/run_on_gpu.h"

namespace tessel::testing {
namespace {

constexpr int kBatch = 16, kPages = 80, kMaxPages = 16;

void MatchesTheInterpreter(const absl::StatusOr<Program>& program) {
  ASSERT_TRUE(program.ok()) << program.status();
  PagedArgs a = MakePagedArgs(kBatch, kPages, kMaxPages);
  std::vector<HostTensor> want = a.tensors;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  absl::StatusOr<std::vector<HostTensor>> got = RunOnGpu(*program, a.tensors);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectAllClose((*got)[4], want[4], 1e-3, 1e-3);
}

TEST(LetGpu, PagedGatherMatchesTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  MatchesTheInterpreter(PagedGatherProgram(kBatch, kPages, kMaxPages));
}

TEST(LetGpu, GuardedGemmMatchesTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  MatchesTheInterpreter(GuardedGemmProgram(kBatch, kPages, kMaxPages));
}

}  // namespace
}  // namespace tessel::testing
