// T::atomic_ticket without a GPU: "the last block adds" (ticket_cases.h) in
// the interpreter, whose blocks run in a scrambled order so that the block
// drawing a tile's last ticket is not always the last slice; and the
// generated CUDA and PTX for sm_90a and sm_80 (a barrier, one thread's
// acquire-release atom into the shared slot, a barrier before the slot is
// read; NVRTC and ptxas compile both). The launches are ticket_gpu_test.cc's.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/interpret.h"
#include "tests/codegen/ticket_cases.h"
#include "tests/common/generated_code.h"

namespace tessel::testing {
namespace {

constexpr int kTiles = 7, kSlices = 5;

// Out[t, j] = sum over s of (t * 64 + j) * (s + 1); counters back to 0;
// each tile's tickets a permutation of 0 .. slices - 1. Returns how many
// tiles' last ticket went to a block other than the last slice.
int ExpectLastBlockAdded(const std::vector<HostTensor>& a, int tiles,
                         int slices) {
  int scrambled = 0;
  for (int t = 0; t < tiles; ++t) {
    EXPECT_EQ(a[1].get_flat(t), 0) << "counter of tile " << t;
    for (int j = 0; j < 64; ++j) {
      const double want = double(t * 64 + j) * slices * (slices + 1) / 2;
      EXPECT_EQ(a[2].get_flat(t * 64 + j), want)
          << "tile " << t << " col " << j;
    }
    std::set<int> drawn;
    for (int s = 0; s < slices; ++s) {
      const int d = static_cast<int>(a[3].get_flat(t * slices + s));
      drawn.insert(d);
      if (d == slices - 1 && s != slices - 1) ++scrambled;
    }
    EXPECT_EQ(drawn.size(), size_t(slices)) << "tile " << t;
    EXPECT_EQ(*drawn.begin(), 0);
    EXPECT_EQ(*drawn.rbegin(), slices - 1);
  }
  return scrambled;
}

TEST(Ticket, TheLastBlockAddsInTheInterpreter) {
  absl::StatusOr<Program> program = LastBlockAddsProgram(kTiles, kSlices);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> a = MakeLastBlockAddsArgs(kTiles, kSlices);
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : a) ptrs.push_back(&t);
  absl::Status s = interpret(*program, ptrs);
  ASSERT_TRUE(s.ok()) << s;
  // Not in block order: a kernel that took the last slice for the last
  // block would read NaN partials.
  EXPECT_GT(ExpectLastBlockAdded(a, kTiles, kSlices), 0);
  // The counters were reset: a second launch is right too.
  s = interpret(*program, ptrs);
  ASSERT_TRUE(s.ok()) << s;
  ExpectLastBlockAdded(a, kTiles, kSlices);
}

// A counter the kernel does not reset: the second launch's tickets start
// at slices, no block draws slices - 1, Out keeps its first values, and
// the counters hold 2 * slices.
TEST(Ticket, TicketsCountOnAcrossLaunches) {
  absl::StatusOr<Program> program = LastBlockAddsProgram(kTiles, kSlices);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> a = MakeLastBlockAddsArgs(kTiles, kSlices);
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : a) ptrs.push_back(&t);
  a[1].fill(kSlices);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  for (int t = 0; t < kTiles; ++t) {
    EXPECT_EQ(a[1].get_flat(t), 2 * kSlices);
    EXPECT_EQ(a[2].get_flat(t * 64), -1);
    for (int s = 0; s < kSlices; ++s)
      EXPECT_GE(a[3].get_flat(t * kSlices + s), kSlices);
  }
}

TEST(Ticket, OneThreadTakesItBetweenBarriersAndItCompiles) {
  absl::StatusOr<Program> program = LastBlockAddsProgram(kTiles, kSlices);
  ASSERT_TRUE(program.ok()) << program.status();
  for (Target t : {Target::sm90a(), Target::sm80()}) {
    SCOPED_TRACE(t.sm());
    const GeneratedCode code = Generate(*program, t);
    const std::string& cuda = code.cuda;
    const size_t take = cuda.find(
        "tl::atomic_ticket(&Counters_ticket_slot[0]"
        ", &Counters[");
    ASSERT_NE(take, std::string::npos) << cuda;
    // The release barrier before, the thread-0 guard around, and the
    // planner's barrier between the slot's write and its read.
    const size_t before = cuda.rfind("__syncthreads();", take);
    ASSERT_NE(before, std::string::npos) << cuda;
    EXPECT_NE(cuda.substr(before, take - before).find("== 0"),
              std::string::npos)
        << cuda.substr(before, take - before);
    const size_t read = cuda.find("= Counters_ticket_slot[0];", take);
    ASSERT_NE(read, std::string::npos) << cuda;
    EXPECT_NE(cuda.substr(take, read - take).find("__syncthreads();"),
              std::string::npos)
        << cuda.substr(take, read - take);
    ASSERT_FALSE(code.ptx.empty());  // the PTX emitter spells the kernel
    EXPECT_NE(code.ptx.find("atom.acq_rel.gpu.global.add.s32"),
              std::string::npos)
        << code.ptx;
    ExpectCompilesBothWays(*program, t);
  }
}

}  // namespace
}  // namespace tessel::testing
