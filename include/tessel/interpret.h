// Runs a tile program on the CPU: the numerical reference for GPU kernels
// and the way to run tessel programs without a GPU.
//
// clang-format off
//   absl::StatusOr<tessel::Program> prog = Gemm(256, 256, 256);
//   tessel::HostTensor a(tessel::f16, {256, 256}), b(tessel::f16, {256, 256});
//   tessel::HostTensor c(tessel::f16, {256, 256});
//   absl::Status s = tessel::interpret(*prog, {&a, &b, &c});   // writes c
// clang-format on
//
// Every block of the grid runs (over host threads; the result does not
// depend on how many), every op with the semantics of docs/ir.md: the
// boundary rule, symbolic sizes bound from the tensors' shapes, dtype
// rounding exactly as the GPU stores values, atomics as exact adds in block
// order. User bugs come back as a Status naming the op and the source line:
// reading a tile element nothing wrote, an index out of bounds, an mbarrier
// wait that can never complete, arguments that do not match the parameters.
// The same runs behind compile(program, {.target = Target::cpu()}) and
// CompiledKernel::launch on host TensorViews. See docs/interpreter.md.
#ifndef TESSEL_INTERPRET_H_
#define TESSEL_INTERPRET_H_

#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "tessel/host_tensor.h"
#include "tessel/program.h"

namespace tessel {

struct InterpretOptions {
  int num_threads = 0;            // 0: one per hardware thread
  std::ostream* print = nullptr;  // T::print output; std::cout when null
};

// args: one tensor per program parameter, in declaration order; outputs are
// written in place.
absl::Status interpret(const Program& program, std::vector<HostTensor*> args,
                       const InterpretOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_INTERPRET_H_
