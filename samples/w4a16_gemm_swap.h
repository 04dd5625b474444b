// The swapped-operand form of samples/w4a16_gemm (w4a16_gemm.h): C^T's
// tile is W's tile times A's tile transposed, so the dequantized weights
// are the gemm's register A operand and the activations its shared B.
#ifndef TESSEL_SAMPLES_W4A16_GEMM_SWAP_H_
#define TESSEL_SAMPLES_W4A16_GEMM_SWAP_H_

#include "absl/status/statusor.h"
#include "samples/w4a16_gemm.h"

namespace tessel::samples {

// What both forms declare alike: the program's tensors, in their order,
// and the tiles a k step stages (the activations, the packed words and the
// scale row of block_n rows of W).
struct W4A16Tensors {
  Buffer A, Wq, Scales, C;
};
W4A16Tensors DeclareW4A16Tensors(ProgramBuilder& p, const W4A16Config& c);
struct W4A16StepTiles {
  Buffer A_shared, Wq_shared, S_shared;
};
W4A16StepTiles AllocW4A16StepTiles(int block_m, int block_n);

// DefaultW4A16Tile's choice before the stages are cut to an arch.
W4A16Tile DefaultW4A16SwapTile(int64_t M);

// The program for tile `t` (t.swap_ab): blocks of t.block_n rows of W
// (rows of C^T) by t.block_m rows of A.
absl::StatusOr<Program> W4A16SwapABProgram(const W4A16Config& c,
                                           const W4A16Tile& t);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_W4A16_GEMM_SWAP_H_
