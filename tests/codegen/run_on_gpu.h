// Runs a program once on this machine's GPU: compiles it, uploads the
// arguments, launches, and returns every argument as the device left it.
// Shared by the GPU tests that compare against the interpreter.
#ifndef TESSEL_TESTS_CODEGEN_RUN_ON_GPU_H_
#define TESSEL_TESTS_CODEGEN_RUN_ON_GPU_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/device_buffer.h"
#include "tessel/compile.h"
#include "tessel/host_tensor.h"

namespace tessel::testing {

inline absl::StatusOr<std::vector<HostTensor>> RunOnGpu(
    const Program& program, const std::vector<HostTensor>& initial,
    PassConfig config = {}) {
  absl::StatusOr<CompiledKernel> kernel =
      compile(program, {.target = Target::detect(), .pass_config = config});
  if (!kernel.ok()) return kernel.status();
  std::vector<jit::DeviceBuffer> buffers;
  std::vector<TensorView> views;
  for (const HostTensor& t : initial) {
    absl::StatusOr<jit::DeviceBuffer> b =
        jit::DeviceBuffer::Allocate(t.num_bytes());
    if (!b.ok()) return b.status();
    if (absl::Status s = b->CopyFromHost(t.data(), t.num_bytes()); !s.ok()) {
      return s;
    }
    views.push_back(TensorView::Contiguous(b->ptr(), t.dtype(), t.shape()));
    buffers.push_back(*std::move(b));
  }
  if (absl::Status s = kernel->launch(views); !s.ok()) return s;
  if (absl::Status s = jit::SynchronizeStream(nullptr); !s.ok()) return s;
  std::vector<HostTensor> result;
  for (size_t i = 0; i < initial.size(); ++i) {
    HostTensor t(initial[i].dtype(), initial[i].shape());
    if (absl::Status s = buffers[i].CopyToHost(t.data(), t.num_bytes());
        !s.ok()) {
      return s;
    }
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_RUN_ON_GPU_H_
