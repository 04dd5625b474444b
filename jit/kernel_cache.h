// The compile-with-cache entry point: CUDA source in, cubin or loaded kernel
// out, from memory, from disk, or compiled (once): by ptxas from the
// source's PTX translation where it offers one (ptx_translation.h), else by
// NVRTC.
//
//   tessel::jit::KernelCache& cache = tessel::jit::KernelCache::Default();
//   ASSIGN_OR_RETURN(LoadedKernel kernel,
//                    cache.GetKernel(source, {.arch = ""}, signature));
//   RETURN_IF_ERROR(kernel.Launch(config, args));
//
//   // Without a GPU (warmup, CI): the cubin only.
//   ASSIGN_OR_RETURN(CachedCubin c,
//                    cache.GetCubin(source, {.arch = "sm_90a"}));
//
// In process: a memory cache (bounded, cubin_memory.h) in front of the disk,
// with single-flight per key (threads asking for one kernel share one
// compile), and loaded modules kept per (key, context): a kernel launched in
// two contexts (two GPUs, or the host application's own context) is loaded
// once into each. Contexts are told apart by ContextId, so a destroyed
// context's modules are never used for a new context that reuses its handle;
// they are dropped at the next load. Across processes: the DiskCache, whose
// per-key lock makes N processes missing one key compile it once.
#ifndef TESSEL_JIT_KERNEL_CACHE_H_
#define TESSEL_JIT_KERNEL_CACHE_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jit/cubin_memory.h"
#include "jit/disk_cache.h"
#include "jit/launch.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

struct KernelCacheOptions {
  DiskCacheOptions disk = DiskCacheOptions::FromEnv();
  // Compile in a forked child, so that a compiler crash is a Status.
  bool isolated = false;
  absl::Duration isolated_timeout = absl::Minutes(5);
  // Cubins kept in memory, least recently used evicted past this many
  // bytes (they stay on disk); <= 0: no bound. Default() takes
  // $TESSEL_MEMORY_CACHE_MAX_BYTES when set. Loaded modules are not
  // bounded: they live as long as the cache or a kernel using them.
  int64_t memory_budget_bytes = int64_t{256} << 20;
};

enum class CubinOrigin { kMemory, kDisk, kCompiled };
const char* CubinOriginName(CubinOrigin origin);  // "memory", "disk", ...

struct CachedCubin {
  std::string key;
  std::shared_ptr<const Cubin> cubin;
  CubinOrigin origin = CubinOrigin::kCompiled;
  // For a compile: whether the disk cache stored it (DiskCache::Store).
  absl::Status stored;
};

class KernelCache {
 public:
  explicit KernelCache(KernelCacheOptions options = {});
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The process-wide cache, configured from the environment; never destroyed.
  static KernelCache& Default();

  // The cubin for (source, options) under ComputeCacheKey's key: from
  // memory, else from disk, else compiled and stored. On a miss the PTX
  // translation, if the source offers one, runs only then; ptxas compiles
  // it (maybe twice, for registers: occupancy_fit.h), and NVRTC compiles the
  // CUDA text where the translation is Unimplemented or ptxas refuses it.
  // Threads missing one key share one compile; processes, through the disk
  // cache's key lock. Errors are not cached: the next call tries again.
  absl::StatusOr<CachedCubin> GetCubin(const CudaSource& source,
                                       const CompileOptions& options);

  // The cubin stored under `key` (ComputeCacheKey's) for `arch` (resolved:
  // "sm_90a") and `entry`, from memory or disk; nullopt when neither holds
  // it. Never compiles: for a caller that knows the key without the source
  // (the program index, src/runtime/program_index.h).
  std::optional<CachedCubin> FindCubin(const std::string& key,
                                       const std::string& arch,
                                       const std::string& entry);

  // GetCubin, then Load. An empty options.arch is the context's device's.
  absl::StatusOr<LoadedKernel> GetKernel(const CudaSource& source,
                                         const CompileOptions& options,
                                         KernelSignature signature,
                                         CUcontext context = nullptr);

  // Loads a cubin into `context` (nullptr: the current context, else device
  // 0's primary), reusing the module already loaded for (key, context).
  absl::StatusOr<LoadedKernel> Load(const CachedCubin& cubin,
                                    KernelSignature signature,
                                    CUcontext context = nullptr);

  DiskCache& disk() { return disk_; }
  const KernelCacheOptions& options() const { return options_; }

  // Forgets the in-memory cubins and modules (the disk stays).
  void ClearMemory();

 private:
  struct Flight;
  using ModuleKey = std::pair<std::string, uint64_t>;  // key, ContextId
  absl::StatusOr<CachedCubin> Fill(const std::string& key,
                                   const CudaSource& source,
                                   const CompileOptions& options);

  KernelCacheOptions options_;
  DiskCache disk_;

  absl::Mutex mu_;
  CubinMemory memory_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> flights_
      ABSL_GUARDED_BY(mu_);

  absl::Mutex modules_mu_;
  absl::flat_hash_map<ModuleKey, std::shared_ptr<internal::LoadedModule>>
      modules_ ABSL_GUARDED_BY(modules_mu_);
};

}  // namespace tessel::jit

#endif  // TESSEL_JIT_KERNEL_CACHE_H_
