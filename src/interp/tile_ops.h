// Run-time implementations of the block-collective tile ops on evaluated
// regions (boxes). The compiled closures evaluate start/extent expressions
// and call these; each reports user errors through Fail(frame, site, ...).
//
//   Box src = ..., dst = ...;
//   RunCopy(frame, site, src, dst);   // boundary rule on global boxes
#ifndef TESSEL_SRC_INTERP_TILE_OPS_H_
#define TESSEL_SRC_INTERP_TILE_OPS_H_

#include <cstdint>
#include <vector>

#include "src/interp/frame.h"
#include "src/ir/stmt.h"

namespace tessel::interp {

// A region with its start and extent evaluated for the current block.
struct Box {
  int slot = -1;
  BufferInstance* buffer = nullptr;
  std::vector<int64_t> start;
  std::vector<int64_t> extent;
};

// Checks extents >= 0 and, for a non-global box, that it lies inside its
// buffer. False (with f failed) otherwise.
bool CheckBox(Frame& f, const Site& site, const Box& box, const char* role);

void RunCopy(Frame& f, const Site& site, const Box& src, const Box& dst);
void RunGemm(Frame& f, const Site& site, const Box& a, const Box& b,
             const Box& c, bool transpose_a, bool transpose_b,
             bool clear_accum);
// value as double for float dtypes, int_value for integer ones.
void RunFill(Frame& f, const Site& site, const Box& dst, double value,
             int64_t int_value);
void RunReduce(Frame& f, const Site& site, BufferInstance& src,
               BufferInstance& dst, ir::ReduceKind kind, int dim, bool clear);
void RunCumsum(Frame& f, const Site& site, BufferInstance& src,
               BufferInstance& dst, int dim, bool reverse);
void RunAtomicTile(Frame& f, const Site& site, ir::AtomicOp op, const Box& dst,
                   const Box& src);
void RunAtomicElement(Frame& f, const Site& site, ir::AtomicOp op,
                      const Box& dst, double value, int64_t int_value);

// dst[index] = dst[index] op value, in dst's dtype.
void ApplyAtomic(BufferInstance& dst, int64_t index, ir::AtomicOp op,
                 double value, int64_t int_value);

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_TILE_OPS_H_
