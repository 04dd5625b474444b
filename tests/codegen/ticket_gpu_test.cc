// T::atomic_ticket on the GPU: "the last block adds" (ticket_cases.h) over
// many tiles and slices, launched twice (the kernel resets its counters),
// against the float64 sums. With TESSEL_PTX=0 the same through NVRTC.
#include <gtest/gtest.h>

#include <vector>

#include "tessel/testing.h"
#include "tests/codegen/run_on_gpu.h"
#include "tests/codegen/ticket_cases.h"

namespace tessel::testing {
namespace {

TEST(TicketGpu, TheLastBlockAddsTwice) {
  TESSEL_SKIP_WITHOUT_GPU();
  constexpr int kTiles = 300, kSlices = 7;
  absl::StatusOr<Program> program = LastBlockAddsProgram(kTiles, kSlices);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> args = MakeLastBlockAddsArgs(kTiles, kSlices);
  for (int launch = 0; launch < 2; ++launch) {
    SCOPED_TRACE(launch);
    absl::StatusOr<std::vector<HostTensor>> got = RunOnGpu(*program, args);
    ASSERT_TRUE(got.ok()) << got.status();
    int bad = 0;
    for (int t = 0; t < kTiles && bad < 5; ++t) {
      bad += (*got)[1].get_flat(t) != 0;
      EXPECT_EQ((*got)[1].get_flat(t), 0) << "counter of tile " << t;
      for (int j = 0; j < 64 && bad < 5; ++j) {
        const double want = double(t * 64 + j) * kSlices * (kSlices + 1) / 2;
        const bool ok = (*got)[2].get_flat(t * 64 + j) == want;
        bad += !ok;
        EXPECT_TRUE(ok) << "tile " << t << " col " << j << ": "
                        << (*got)[2].get_flat(t * 64 + j) << " vs " << want;
      }
    }
    args = *got;
    args[2].fill(-1);
  }
}

}  // namespace
}  // namespace tessel::testing
