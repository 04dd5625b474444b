// Which global -> shared copies the Tensor Memory Accelerator can make, and
// how: the boxes of one tensor map (jit/tensor_map.h) that together fill
// the shared tile in the layout the tile already has.
//
//   T.copy(B[k*64:+64, bx*128:+128], B_shared)   B_shared: [64, 128] f16,
//                                                 128-byte atoms (wgmma)
//   => 2 boxes [64, 64], SWIZZLE_128B, at columns bx*128 + 0 and + 64,
//      into B_shared + 0 and + 64 * 64 elements; 16384 bytes expected.
//
// The TMA writes a box densely, innermost dimension first, and swizzles by
// shared-memory address bits; that is the tile layout exactly when the
// tile's rows are 32, 64 or 128 bytes under the matching swizzle, 128-byte
// column atoms, or unswizzled rows of whole 16-byte chunks. Boxes past the
// tensor's edges load zeros: the boundary rule of T.copy.
#ifndef TESSEL_SRC_PASSES_TMA_BOXES_H_
#define TESSEL_SRC_PASSES_TMA_BOXES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

struct TmaCopyPlan {
  int param = 0;             // the global tensor's index in program.params
  std::vector<int64_t> box;  // one box, outermost first
  int swizzle_bytes = 0;     // 0, 32, 64, 128
  int boxes = 1;             // along the innermost dimension
  int64_t box_cols = 0;      // elements of a box's innermost dimension
  int64_t bytes = 0;         // the whole copy: what its barrier expects
  int rows_dim = -1;         // the box dimension of the tile's rows, if any
};

// The plan of copy c, or nullopt with the reason in *why. The destination
// may be a stage of a staged tile (leading indices of extent 1).
std::optional<TmaCopyPlan> PlanTmaCopy(const ir::CopyNode& c,
                                       const LoweringState& state,
                                       std::string* why);

// The plan of one block's half of the copy in a cluster pair that shares
// it (PassConfig::cluster_size): every box with half its rows, the block
// of rank r taking rows [r * half, (r + 1) * half) and the TMA multicasting
// them to both. nullopt when the halves would not start on a swizzle
// period (8 rows) or the tile has no rows to split.
std::optional<TmaCopyPlan> HalfRowsPlan(const TmaCopyPlan& plan);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_TMA_BOXES_H_
