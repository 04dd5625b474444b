// Target::cpu(): compile() builds the interpreter's executable (no NVRTC, no
// GPU, no disk cache) and launch() runs it over the whole grid on the
// caller's host memory, in place.
//
//   absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> impl =
//       runtime::CompileForCpu(program);
//   absl::Status s = runtime::LaunchOnCpu(**impl, {a, b, c}, nullptr);
#ifndef TESSEL_SRC_RUNTIME_CPU_KERNEL_H_
#define TESSEL_SRC_RUNTIME_CPU_KERNEL_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/ir/program.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel::runtime {

// Verifies the program and compiles it for the interpreter. arch() is "cpu",
// threads() the block size, lowered_ir() the verified program; no source.
absl::StatusOr<std::shared_ptr<KernelImpl>> CompileForCpu(
    const ir::Program& program);

// TensorView::data are host pointers, checked as the GPU launch checks
// device tensors, and for being mapped host memory the kernel may read (and
// write, for what it writes; host_memory.h). stream must be null. Interpreter
// errors (a read before any write, an index out of bounds, an mbarrier
// deadlock) name the user's line.
absl::Status LaunchOnCpu(const KernelImpl& k,
                         const std::vector<TensorView>& tensors,
                         CUstream_st* stream);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_CPU_KERNEL_H_
