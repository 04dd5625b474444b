// The CPU interpreter: runs a tile program on host tensors, block by block,
// with the semantics of docs/ir.md. The numerical reference for every GPU
// kernel, and the `cpu` target.
//
//   tessel::HostTensor a(f16, {M, K}), b(f16, {K, N}), c(f32, {M, N});
//   absl::Status s = interp::Run(program, {&a, &b, &c});
//   // or compile once, run many times:
//   auto exe = interp::Compile(program);   // src/interp/executable.h
//   s = interp::Run(**exe, {&a, &b, &c}, {.num_threads = 4});
//
// User mistakes come back as a Status naming the op and the user's source
// line (and the block): reading a shared/fragment/local element before any
// write, an index out of bounds of a non-global buffer, an mbarrier wait
// that can never complete, argument shapes or dtypes that do not match the
// parameters. Outside a global tensor the boundary rule holds (docs/ir.md):
// loads read 0, stores and atomics are skipped.
#ifndef TESSEL_SRC_INTERP_INTERPRETER_H_
#define TESSEL_SRC_INTERP_INTERPRETER_H_

#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "src/interp/executable.h"
#include "src/ir/program.h"
#include "tessel/host_tensor.h"

namespace tessel::interp {

struct RunOptions {
  // Host threads running blocks; 0 = one per hardware thread. The result is
  // the same for every count: global atomics of a threaded run are applied
  // after the grid, in block order (what a serial run computes).
  int num_threads = 0;
  // Where Print ops write (std::cout when null).
  std::ostream* print = nullptr;
};

// args: one tensor per program parameter, in parameter order. Symbolic sizes
// are bound from the tensors' shapes. Outputs are written in place.
absl::Status Run(const ir::Program& program, std::vector<HostTensor*> args,
                 const RunOptions& options = {});
absl::Status Run(const Executable& exe, std::vector<HostTensor*> args,
                 const RunOptions& options = {});

// Host memory the interpreter reads and writes in place without owning it:
// how CompiledKernel::launch runs Target::cpu() kernels on the caller's
// TensorViews. Element (i, j, ...) is at data + (i * strides[0] + j *
// strides[1] + ...) elements; empty strides: row-major. The caller checks
// that the strides are positive and do not overlap (runtime::CheckTensors)
// and that data holds every element they reach.
struct TensorRef {
  DataType dtype = DataType::kF32;
  std::vector<int64_t> shape;
  std::byte* data = nullptr;
  std::vector<int64_t> strides;
};

// Run over TensorRefs (the same checks and errors; a null data is an error).
absl::Status RunOnRefs(const Executable& exe,
                       const std::vector<TensorRef>& args,
                       const RunOptions& options = {});

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_INTERPRETER_H_
