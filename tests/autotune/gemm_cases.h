// The GEMM tuning case the GPU test runs, shared with the CPU test that
// compiles the same candidates for sm_90a without a GPU.
#ifndef TESSEL_TESTS_AUTOTUNE_GEMM_CASES_H_
#define TESSEL_TESTS_AUTOTUNE_GEMM_CASES_H_

#include "samples/gemm.h"
#include "tessel/autotune.h"

namespace tessel::autotuner::testing {

inline samples::GemmConfig Gemm512() { return {.M = 512, .N = 512, .K = 512}; }

// Three tiles that work, and one whose shared memory (4 stages of 256x128
// and 128x256 f16 tiles: 512 KB) no GPU has, so compile() refuses it.
inline constexpr int kInvalidCandidate = 3;
inline TuneSpace Gemm512Space() {
  return TuneSpace::List({
      {{"block_m", 128},
       {"block_n", 128},
       {"block_k", 32},
       {"num_stages", 3},
       {"threads", 128}},
      {{"block_m", 64},
       {"block_n", 64},
       {"block_k", 32},
       {"num_stages", 2},
       {"threads", 128}},
      {{"block_m", 128},
       {"block_n", 128},
       {"block_k", 64},
       {"num_stages", 3},
       {"threads", 256}},
      {{"block_m", 256},
       {"block_n", 256},
       {"block_k", 128},
       {"num_stages", 4},
       {"threads", 256}},
  });
}

}  // namespace tessel::autotuner::testing

#endif  // TESSEL_TESTS_AUTOTUNE_GEMM_CASES_H_
