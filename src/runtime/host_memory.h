// Where a Target::cpu() launch's tensors live. The interpreter reads and
// writes the caller's memory in place, so a device pointer or a bogus one
// (0x1000, a freed or PROT_NONE page) would crash it; launch() refuses such
// tensors first, with InvalidArgument naming the parameter.
//
//   std::vector<bool> written = runtime::WrittenParams(program);  // compile
//   RETURN_IF_ERROR(runtime::CheckHostMemory(impl, tensors));     // launch
//
// Each view's bytes (from its pointer through the last element its shape and
// strides reach) must be mapped readable in this process, and writable for a
// parameter the kernel writes; /proc/self/maps is read once per launch (tens
// of microseconds). Where the CUDA driver is already loaded (something used
// the GPU), device memory is named as such (cuPointerGetAttribute); managed
// and pinned host memory are host memory. Without /proc (not Linux) only the
// driver's answer is checked.
#ifndef TESSEL_SRC_RUNTIME_HOST_MEMORY_H_
#define TESSEL_SRC_RUNTIME_HOST_MEMORY_H_

#include <vector>

#include "absl/status/status.h"
#include "src/ir/program.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/runtime.h"

namespace tessel::runtime {

// Per parameter: whether the program may write it (a store, copy, fill,
// atomic, reduce, cumsum or gemm into it, or an intrinsic naming it).
std::vector<bool> WrittenParams(const ir::Program& program);

// Expects CheckTensors to have passed (shapes, strides, non-null data).
absl::Status CheckHostMemory(const KernelImpl& k,
                             const std::vector<TensorView>& tensors);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_HOST_MEMORY_H_
