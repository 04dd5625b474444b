// Running a compiled kernel on device tensors (host tensors for
// Target::cpu()).
//
//   tessel::TensorView a = tessel::TensorView::Contiguous(ptr_a, tessel::f16,
//                                                         {4096, 4096});
//   TESSEL_RETURN_IF_ERROR(kernel.launch({a, b, c}, stream));
//
// launch() checks every view against its parameter ("A: expected
// f16[4096,4096], got f32[4096,4096]"), binds the program's symbolic sizes
// from the shapes, computes the grid and launches on `stream` (nullptr: the
// legacy default stream).
//
// Which GPU: the kernel runs in the context of `stream` when one is given
// (a stream belongs to the context it was created in), else in the calling
// thread's current CUDA context (cudaSetDevice(1), or the host's own
// CUcontext made current), else in device 0's primary context. The cubin is
// loaded once per context; the tensors must be memory that context's device
// can reach (allocated there, or with peer access enabled). A kernel
// compiled for another arch than that device's fails to load, saying both.
// A Target::cpu() kernel takes host pointers and no stream (nullptr); it
// runs the interpreter over the whole grid before launch() returns, reading
// and writing the tensors in place (atomic_add adds to what they hold).
#ifndef TESSEL_RUNTIME_H_
#define TESSEL_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tessel/dtype.h"

struct CUstream_st;

namespace tessel {

// A device tensor: pointer, element type, shape and strides (in elements;
// empty = row-major contiguous). Strides make a view of part of a larger
// tensor without a copy: columns [c0, c1) of a row-major f16[M, W] matrix at
// `base` are
//   TensorView{base + c0 * 2, f16, {M, c1 - c0}, {W, 1}}
// and its transpose f16[W, M] is TensorView{base, f16, {W, M}, {1, W}}.
// Strides must be positive (any for a dimension of extent 1), fit in int32,
// and not overlap (no two indices reach one element). A launch with strided
// views runs a variant of the kernel compiled for them on first use (the
// strides are its parameters, so any values share it); a view whose
// innermost stride is 1 keeps vector and TMA copies where its rows are
// aligned for them; other strided views, and any view (row-major too) whose
// rows or address miss the alignment those copies need (a symbolic N = 243
// of f16), are read and written one element at a time. Target::cpu() takes
// the same views.
struct TensorView {
  uint64_t data = 0;  // a CUdeviceptr; a host address for Target::cpu()
  DataType dtype = DataType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  static TensorView Contiguous(uint64_t data, DataType dtype,
                               std::vector<int64_t> shape) {
    return TensorView{data, dtype, std::move(shape), {}};
  }
  template <typename T>
  static TensorView Contiguous(T* data, DataType dtype,
                               std::vector<int64_t> shape) {
    return Contiguous(reinterpret_cast<uintptr_t>(data), dtype,
                      std::move(shape));
  }
  std::string ToString() const;  // "f16[4096,4096]"
};

namespace runtime {
struct KernelImpl;
}  // namespace runtime

class CompiledKernel {
 public:
  CompiledKernel() = default;
  explicit CompiledKernel(std::shared_ptr<runtime::KernelImpl> impl)
      : impl_(std::move(impl)) {}

  absl::Status launch(const std::vector<TensorView>& tensors,
                      CUstream_st* stream = nullptr) const;

  const std::string& name() const;
  // The generated CUDA C++ and the kernel's name in it (empty for cpu).
  const std::string& source() const;
  const std::string& entry() const;
  // The IR the codegen printed (cpu: the verified program it interprets).
  const std::string& lowered_ir() const;
  const std::string& arch() const;  // "sm_90a", ..., "cpu"
  // What the scheduler chose, one line each: every gemm's instruction
  // ("gemm C += A * B: wgmma, warps 8x1, ..."; "fma" where the dtypes have
  // no tensor-core path), the warp-specialized TMA pipeline (on sm_90a, or
  // why a Pipelined loop kept the cp.async one), a persistent grid. Empty
  // for the CPU target.
  const std::vector<std::string>& schedule() const;
  int threads() const;
  int shared_memory_bytes() const;  // dynamic shared memory per block
  size_t cubin_bytes() const;
  // Where compile() found the cubin: "memory" or "disk" (cache hits),
  // "compiled" (NVRTC ran), or "none" (the CPU target has no cubin).
  const char* cache_origin() const;
  bool valid() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<runtime::KernelImpl> impl_;
};

}  // namespace tessel

#endif  // TESSEL_RUNTIME_H_
