// Checks that a program is well formed: the contract later stages rely on.
//
//   if (absl::Status s = ir::Verify(program); !s.ok()) return s;
//   // "gemm.cc:42: copy: shape mismatch: src A[...] extents [64, 32] vs dst
//   ..."
//
// Every error is InvalidArgument, names the op, the buffers and their shapes,
// and starts with the op's source location (file:line). Checked: buffer and
// variable uses inside their scopes; ops inside the kernel and the kernel not
// nested; loop ranges and num_stages; index ranks and dtypes; copy extents;
// gemm shapes, dtypes and scopes; reduce / cumsum dims and shapes; atomics'
// scopes and dtypes; regions and elements of non-global buffers statically
// inside bounds (global regions may overrun the tensor: the boundary rule),
// tile ops not inside Parallel loops; mbarrier ops on barrier arrays.
#ifndef TESSEL_SRC_IR_VERIFIER_H_
#define TESSEL_SRC_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "src/ir/program.h"

namespace tessel::ir {

absl::Status Verify(const Program& program);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_VERIFIER_H_
