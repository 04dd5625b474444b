// Loading a cubin and launching its kernel with checked arguments.
//
//   KernelSignature sig = {ArgSpec::Pointer(), ArgSpec::Pointer(),
//                          ArgSpec::F32(), ArgSpec::I32()};
//   ASSIGN_OR_RETURN(LoadedKernel saxpy, LoadKernel(cubin, sig));
//   KernelArgs args;
//   args.AddPointer(x.ptr()).AddPointer(y.ptr()).Add(2.0f).Add(n);
//   RETURN_IF_ERROR(saxpy.Launch({.grid = {(n + 255) / 256}, .block = {256}},
//                                args));
//
// The arguments are checked against the signature (count, kind, size) before
// launching; the signature is checked against the kernel's real parameter
// sizes at load where the driver can tell (cuFuncGetParamInfo). Dynamic
// shared memory above 48 KB raises the kernel's limit on first use; a request
// over the device's opt-in limit is ResourceExhausted.
#ifndef TESSEL_JIT_LAUNCH_H_
#define TESSEL_JIT_LAUNCH_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

enum class ArgKind : uint8_t {
  kPointer,  // a device pointer (8 bytes)
  kInt,      // any integer type, by size
  kFloat,    // float (4), double (8); half bits go as kInt 2
  kBytes,    // a by-value struct, e.g. a CUtensorMap
};

struct ArgSpec {
  ArgKind kind = ArgKind::kPointer;
  uint32_t size = 8;

  static constexpr ArgSpec Pointer() { return {ArgKind::kPointer, 8}; }
  static constexpr ArgSpec I32() { return {ArgKind::kInt, 4}; }
  static constexpr ArgSpec I64() { return {ArgKind::kInt, 8}; }
  static constexpr ArgSpec F32() { return {ArgKind::kFloat, 4}; }
  static constexpr ArgSpec F64() { return {ArgKind::kFloat, 8}; }
  static constexpr ArgSpec Bytes(uint32_t size) {
    return {ArgKind::kBytes, size};
  }
  friend bool operator==(const ArgSpec&, const ArgSpec&) = default;
};

// "ptr", "i32", "f32", "bytes[128]".
std::string ArgSpecName(const ArgSpec& spec);

// The kernel's parameter list, in order.
using KernelSignature = std::vector<ArgSpec>;

// Argument values for one launch. Cheap to build: small argument lists stay
// on the stack.
class KernelArgs {
 public:
  KernelArgs& AddPointer(CUdeviceptr pointer) {
    return Append({ArgKind::kPointer, 8}, &pointer);
  }
  template <typename T>
  KernelArgs& AddPointer(T* pointer) {
    const CUdeviceptr value = reinterpret_cast<uintptr_t>(pointer);
    return Append({ArgKind::kPointer, 8}, &value);
  }
  // Integers and floating-point values, by their own size.
  template <typename T>
  requires std::is_arithmetic_v<T> KernelArgs& Add(T value) {
    const ArgKind kind =
        std::is_floating_point_v<T> ? ArgKind::kFloat : ArgKind::kInt;
    return Append({kind, sizeof(T)}, &value);
  }
  // A by-value struct (trivially copyable), e.g. a CUtensorMap.
  KernelArgs& AddBytes(const void* data, uint32_t size) {
    return Append({ArgKind::kBytes, size}, data);
  }

  size_t size() const { return specs_.size(); }
  const ArgSpec& spec(size_t i) const { return specs_[i]; }
  const void* value(size_t i) const { return bytes_.data() + offsets_[i]; }

 private:
  KernelArgs& Append(ArgSpec spec, const void* data) {
    const size_t offset = (bytes_.size() + 15) & ~size_t{15};
    bytes_.resize(offset + spec.size);
    std::memcpy(bytes_.data() + offset, data, spec.size);
    specs_.push_back(spec);
    offsets_.push_back(static_cast<uint32_t>(offset));
    return *this;
  }

  absl::InlinedVector<ArgSpec, 12> specs_;
  absl::InlinedVector<uint32_t, 12> offsets_;
  absl::InlinedVector<unsigned char, 192> bytes_;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_smem_bytes = 0;
  CUstream stream = nullptr;  // the host app's stream; null: legacy default
  // Blocks per thread-block cluster along x (sm_90; grid.x a multiple of
  // it); 1: no clusters.
  uint32_t cluster_x = 1;
};

namespace internal {
struct LoadedModule;
}  // namespace internal

// A kernel ready to launch. A cheap handle: copies share the module, which
// is unloaded when the last copy (and any cache holding it) goes away.
class LoadedKernel {
 public:
  LoadedKernel() = default;

  absl::Status Launch(const LaunchConfig& config, const KernelArgs& args) const;

  bool valid() const { return module_ != nullptr; }
  CUfunction function() const;
  CUcontext context() const;
  const std::string& entry() const;
  const KernelSignature& signature() const { return signature_; }
  int max_threads_per_block() const;
  // The most dynamic shared memory a launch may ask for: the device's opt-in
  // per-block limit less the kernel's static shared memory.
  int max_dynamic_smem_bytes() const;
  // How many clusters of config.cluster_x blocks of config's size can run
  // at once on the device (cuOccupancyMaxActiveClusters); remembered per
  // (cluster_x, block, shared memory).
  absl::StatusOr<int> MaxActiveClusters(const LaunchConfig& config) const;

 private:
  friend absl::StatusOr<LoadedKernel> LoadKernelFromModule(
      std::shared_ptr<internal::LoadedModule> module,
      KernelSignature signature);
  std::shared_ptr<internal::LoadedModule> module_;
  KernelSignature signature_;
};

// Loads `cubin` into `context` (nullptr: the current context, else device
// 0's primary; see ResolveContext) and
// finds its entry.
absl::StatusOr<LoadedKernel> LoadKernel(const Cubin& cubin,
                                        KernelSignature signature,
                                        CUcontext context = nullptr);

namespace internal {
// The module half of LoadKernel, for caches that share one module among
// signatures.
absl::StatusOr<std::shared_ptr<LoadedModule>> LoadModule(const Cubin& cubin,
                                                         CUcontext context);
}  // namespace internal

// Pairs a loaded module with a signature, checked against the kernel's
// parameters where the driver reports them.
absl::StatusOr<LoadedKernel> LoadKernelFromModule(
    std::shared_ptr<internal::LoadedModule> module, KernelSignature signature);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_LAUNCH_H_
