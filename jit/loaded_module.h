// A loaded module and its kernel, shared by the LoadedKernel handles (and
// the KernelCache) that use it. Internal to jit/; tests build one around a
// fake driver table.
#ifndef TESSEL_JIT_LOADED_MODULE_H_
#define TESSEL_JIT_LOADED_MODULE_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "jit/context.h"
#include "jit/driver_api.h"

namespace tessel::jit {

namespace internal {
struct LoadedModule {
  const DriverApi* api = nullptr;
  CUcontext context = nullptr;
  uint64_t context_id = 0;  // ContextId(context) at load
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string entry;
  // From the cubin (cubin_params.h); nullopt when it could not be read.
  std::optional<size_t> cubin_param_count;
  int max_threads_per_block = 0;
  int static_smem_bytes = 0;
  int max_dynamic_smem_bytes = 0;  // opt-in limit less static
  // The kernel's current dynamic shared memory limit; raised on demand.
  std::atomic<int> dynamic_smem_limit{0};
  absl::Mutex raise_mu;
  // MaxActiveClusters' last answer and what it was asked (0: none yet).
  absl::Mutex clusters_mu;
  uint64_t clusters_key ABSL_GUARDED_BY(clusters_mu) = 0;
  int clusters ABSL_GUARDED_BY(clusters_mu) = 0;

  ~LoadedModule() {
    if (module == nullptr) return;
    // A destroyed context took its modules with it; its handle may now be
    // another context's.
    absl::StatusOr<uint64_t> id = ContextId(*api, context);
    if (!id.ok() || *id != context_id) return;
    ScopedContext current(*api, context);
    if (current.status().ok()) api->cuModuleUnload(module);
  }
};
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_LOADED_MODULE_H_
