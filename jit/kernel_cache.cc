#include "jit/kernel_cache.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "jit/byte_size.h"
#include "jit/cache_key.h"
#include "jit/cache_usage.h"
#include "jit/context.h"
#include "jit/counters.h"
#include "jit/driver_api.h"
#include "jit/isolated_compile.h"
#include "jit/loaded_module.h"
#include "jit/occupancy_fit.h"
#include "jit/ptx_translation.h"

namespace tessel::jit {

struct KernelCache::Flight {
  absl::Notification done;
  absl::StatusOr<CachedCubin> result;
};

const char* CubinOriginName(CubinOrigin origin) {
  switch (origin) {
    case CubinOrigin::kMemory:
      return "memory";
    case CubinOrigin::kDisk:
      return "disk";
    case CubinOrigin::kCompiled:
      return "compiled";
  }
  return "?";
}

KernelCache::KernelCache(KernelCacheOptions options)
    : options_(std::move(options)),
      disk_(options_.disk),
      memory_(options_.memory_budget_bytes) {}

KernelCache& KernelCache::Default() {
  static KernelCache* const cache = [] {
    KernelCacheOptions options;
    options.memory_budget_bytes = static_cast<int64_t>(ByteSizeFromEnv(
        "TESSEL_MEMORY_CACHE_MAX_BYTES", options.memory_budget_bytes));
    return new KernelCache(std::move(options));
  }();
  return *cache;
}

absl::StatusOr<CachedCubin> KernelCache::GetCubin(
    const CudaSource& source, const CompileOptions& options) {
  absl::StatusOr<std::string> key = ComputeCacheKey(source, options);
  if (!key.ok()) return key.status();
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    if (std::shared_ptr<const Cubin> hit = memory_.Find(*key)) {
      internal::Count(internal::Counter::kMemoryHits);
      return CachedCubin{*key, std::move(hit), CubinOrigin::kMemory};
    }
    std::shared_ptr<Flight>& slot = flights_[*key];
    if (slot == nullptr) {
      slot = std::make_shared<Flight>();
      leader = true;
    }
    flight = slot;
  }
  if (!leader) {
    flight->done.WaitForNotification();
    if (!flight->result.ok()) return flight->result.status();
    internal::Count(internal::Counter::kMemoryHits);
    return CachedCubin{*key, flight->result->cubin, CubinOrigin::kMemory};
  }
  flight->result = Fill(*key, source, options);
  {
    absl::MutexLock lock(&mu_);
    if (flight->result.ok()) memory_.Insert(*key, flight->result->cubin);
    flights_.erase(*key);
  }
  flight->done.Notify();
  return flight->result;
}

std::optional<CachedCubin> KernelCache::FindCubin(const std::string& key,
                                                  const std::string& arch,
                                                  const std::string& entry) {
  {
    absl::MutexLock lock(&mu_);
    if (std::shared_ptr<const Cubin> hit = memory_.Find(key)) {
      // The memory cache holds what this process compiled or loaded for the
      // key; its arch and entry are the key's (the key hashes both).
      internal::Count(internal::Counter::kMemoryHits);
      return CachedCubin{key, std::move(hit), CubinOrigin::kMemory};
    }
  }
  std::optional<Cubin> hit = disk_.Load(MakeEntryStamp(key, arch, entry));
  if (!hit) return std::nullopt;
  internal::Count(internal::Counter::kDiskHits);
  RecordCacheUsage(disk_.directory().version_dir(), true);
  auto cubin = std::make_shared<const Cubin>(*std::move(hit));
  {
    absl::MutexLock lock(&mu_);
    memory_.Insert(key, cubin);
  }
  return CachedCubin{key, std::move(cubin), CubinOrigin::kDisk};
}

absl::StatusOr<CachedCubin> KernelCache::Fill(const std::string& key,
                                              const CudaSource& source,
                                              const CompileOptions& options) {
  // The entry must be this key's, compiled for this arch by this NVRTC and
  // tessel: a file copied over it from another key is a miss.
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  const EntryStamp stamp = MakeEntryStamp(key, *arch, source.entry);
  // For `tessel-cache stats`, across processes.
  auto record = [&](bool hit) {
    if (disk_.enabled()) RecordCacheUsage(disk_.directory().version_dir(), hit);
  };
  if (std::optional<Cubin> hit = disk_.Load(stamp)) {
    internal::Count(internal::Counter::kDiskHits);
    record(true);
    return CachedCubin{key, std::make_shared<const Cubin>(*std::move(hit)),
                       CubinOrigin::kDisk};
  }
  // Another process may be compiling this key: wait for it, then re-check.
  std::unique_ptr<DiskCache::KeyLock> lock = disk_.LockKey(key);
  if (lock != nullptr) {
    if (std::optional<Cubin> hit = disk_.Load(stamp)) {
      internal::Count(internal::Counter::kDiskHits);
      record(true);
      return CachedCubin{key, std::make_shared<const Cubin>(*std::move(hit)),
                         CubinOrigin::kDisk};
    }
  }
  internal::Count(internal::Counter::kMisses);
  // The PTX translation, where one is offered, runs only now.
  absl::StatusOr<CompileInput> input = ChooseCompileInput(source, options);
  if (!input.ok()) return input.status();
  auto compile = [&](const CompileInput& in) {
    return options_.isolated ? CompileIsolated(in.source, in.options,
                                               options_.isolated_timeout)
                             : Compile(in.source, in.options);
  };
  absl::StatusOr<Cubin> compiled = CompileFitted(*input, compile);
  if (!compiled.ok() && input->source.language != source.language) {
    std::string why = absl::StrCat("ptxas refused the PTX translation (",
                                   compiled.status().message(),
                                   "); NVRTC compiled the CUDA C++");
    *input = Untranslated(source, options, why);
    compiled = compile(*input);
    if (compiled.ok()) compiled->log = absl::StrCat(why, "\n", compiled->log);
  }
  if (!compiled.ok()) return compiled.status();
  // Stamped with the entry asked for (the stamp Load expects); a
  // translation's own name for it is the cubin's lowered entry.
  input->source.entry = source.entry;
  absl::Status stored =
      disk_.Store(key, *compiled, input->source,
                  NormalizedOptionsFor(input->source.language, input->options,
                                       compiled->arch));
  record(false);  // a failed compile leaves no file behind
  return CachedCubin{key, std::make_shared<const Cubin>(*std::move(compiled)),
                     CubinOrigin::kCompiled, std::move(stored)};
}

absl::StatusOr<LoadedKernel> KernelCache::GetKernel(
    const CudaSource& source, const CompileOptions& options,
    KernelSignature signature, CUcontext context) {
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<CachedCubin> cubin;
  if (options.arch.empty()) {
    // Detect the arch of the context the kernel will run in.
    absl::StatusOr<const DriverApi*> api = Driver();
    if (!api.ok()) return api.status();
    ScopedContext current(**api, *ctx);
    if (!current.status().ok()) return current.status();
    cubin = GetCubin(source, options);
  } else {
    cubin = GetCubin(source, options);
  }
  if (!cubin.ok()) return cubin.status();
  return Load(*cubin, std::move(signature), *ctx);
}

absl::StatusOr<LoadedKernel> KernelCache::Load(const CachedCubin& cubin,
                                               KernelSignature signature,
                                               CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<uint64_t> id = ContextId(**api, *ctx);
  if (!id.ok()) return id.status();
  std::shared_ptr<internal::LoadedModule> module;
  {
    absl::MutexLock lock(&modules_mu_);
    const ModuleKey key(cubin.key, *id);
    if (auto it = modules_.find(key); it != modules_.end()) {
      module = it->second;
    } else {
      // Loads are rare (one per kernel and context): the moment to drop
      // the modules of contexts destroyed since.
      absl::erase_if(modules_, [&](const auto& entry) {
        absl::StatusOr<uint64_t> live = ContextId(**api, entry.second->context);
        return !live.ok() || *live != entry.first.second;
      });
      absl::StatusOr<std::shared_ptr<internal::LoadedModule>> loaded =
          internal::LoadModule(*cubin.cubin, *ctx);
      if (!loaded.ok()) return loaded.status();
      module = *std::move(loaded);
      modules_[key] = module;
    }
  }
  return LoadKernelFromModule(std::move(module), std::move(signature));
}

void KernelCache::ClearMemory() {
  {
    absl::MutexLock lock(&mu_);
    memory_.Clear();
  }
  absl::MutexLock lock(&modules_mu_);
  modules_.clear();
}

}  // namespace tessel::jit
