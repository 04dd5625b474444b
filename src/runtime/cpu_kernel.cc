#include "src/runtime/cpu_kernel.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/interp/executable.h"
#include "src/interp/interpreter.h"
#include "src/ir/verifier.h"
#include "src/runtime/check_tensors.h"
#include "src/runtime/host_memory.h"

namespace tessel::runtime {

absl::StatusOr<std::shared_ptr<KernelImpl>> CompileForCpu(
    const ir::Program& program) {
  if (absl::Status s = ir::Verify(program); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const interp::Executable>> exe =
      interp::Compile(program);
  if (!exe.ok()) return exe.status();
  auto impl = std::make_shared<KernelImpl>();
  impl->name = program.name;
  impl->lowered_ir = std::make_shared<LoweredIrText>(program);
  impl->arch = "cpu";
  if (!(*exe)->kernels.empty()) impl->threads = (*exe)->kernels.front().threads;
  impl->params = program.params;
  impl->dims = program.dims;
  impl->param_written = WrittenParams(program);
  impl->interpreter = *std::move(exe);
  return impl;
}

absl::Status LaunchOnCpu(const KernelImpl& k,
                         const std::vector<TensorView>& tensors,
                         CUstream_st* stream) {
  if (stream != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        k.name, ": a Target::cpu() kernel runs on the host when launched; ",
        "pass no stream (nullptr)"));
  }
  absl::StatusOr<SizeBindings> sizes = CheckTensors(k, tensors);
  if (!sizes.ok()) return sizes.status();
  if (absl::Status s = CheckHostMemory(k, tensors); !s.ok()) return s;
  // The interpreter works on the caller's memory in place, as the GPU
  // kernel does: inputs need no copy, outputs and accumulations land there.
  std::vector<interp::TensorRef> refs;
  refs.reserve(tensors.size());
  for (const TensorView& t : tensors) {
    refs.push_back(
        {t.dtype, t.shape,
         reinterpret_cast<std::byte*>(static_cast<uintptr_t>(t.data)),
         t.strides});
  }
  absl::Status s = interp::RunOnRefs(*k.interpreter, refs);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat(k.name, ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace tessel::runtime
