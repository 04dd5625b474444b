// T::bitcast on the GPU: the programs of bitcast_cases.h bit for bit
// against the interpreter (the PTX emitter's kernel for the 32-bit one;
// with TESSEL_PTX=0 the same through NVRTC).
#include <gtest/gtest.h>

#include <vector>

#include "src/interp/numeric.h"
#include "tessel/interpret.h"
#include "tessel/testing.h"
#include "tests/codegen/bitcast_cases.h"
#include "tests/codegen/run_on_gpu.h"

namespace tessel::testing {
namespace {

void SameBits(const absl::StatusOr<Program>& program,
              std::vector<HostTensor> args, int first_output) {
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> want = args;
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : want) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  absl::StatusOr<std::vector<HostTensor>> got = RunOnGpu(*program, args);
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t o = first_output; o < want.size(); ++o) {
    const DataType t = want[o].dtype();
    for (int64_t i = 0; i < want[o].num_elements(); ++i) {
      const double g = (*got)[o].get_flat(i), w = want[o].get_flat(i);
      if (is_float(t)) {
        ASSERT_EQ(interp::EncodeFloat(t, g), interp::EncodeFloat(t, w))
            << "output " << o << " element " << i << ": " << g << " vs " << w;
      } else {
        ASSERT_EQ(g, w) << "output " << o << " element " << i;
      }
    }
  }
}

TEST(BitcastGpu, ThirtyTwoBitWordsMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  SameBits(Bitcast32Program(), MakeBitcast32Args(), 2);
}

TEST(BitcastGpu, SixteenBitValuesMatchTheInterpreter) {
  TESSEL_SKIP_WITHOUT_GPU();
  SameBits(Bitcast16Program(), MakeBitcast16Args(), 2);
}

}  // namespace
}  // namespace tessel::testing
