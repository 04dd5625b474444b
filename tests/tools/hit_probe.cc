// A fresh "application" process for the warm-then-hit tests: builds every
// kernel of a manifest from the registry, compiles each with
// tessel::compile() for one arch, and prints the JIT counters as JSON.
//
//   warmup_hit_probe MANIFEST ARCH CACHE_DIR
//   {"kernels": 3, "failed": 0, "nvrtc_compiles": 0, "disk_hits": 3,
//    "index_hits": 3, ...}
#include <cstdio>
#include <cstdlib>

#include "jit/counters.h"
#include "nlohmann/json.hpp"
#include "tessel/compile.h"
#include "tessel/registry.h"
#include "tools/manifest.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MANIFEST ARCH CACHE_DIR\n", argv[0]);
    return 2;
  }
  // Before the first compile: the default kernel cache reads it once.
  setenv("TESSEL_CACHE_DIR", argv[3], 1);
  absl::StatusOr<tessel::tools::Manifest> manifest =
      tessel::tools::LoadManifest(argv[1]);
  if (!manifest.ok()) return 2;
  absl::StatusOr<tessel::tools::ManifestPrograms> programs =
      tessel::tools::BuildManifestPrograms(
          *manifest, tessel::KernelRegistry::Global(), {argv[2]});
  if (!programs.ok()) return 2;
  int failed = 0, kernels = 0;
  for (size_t i = 0; i < programs->size(); ++i) {
    const tessel::tools::ManifestEntry& entry = manifest->kernels[i];
    for (const auto& [arch, program] : (*programs)[i]) {
      ++kernels;
      absl::StatusOr<tessel::CompiledKernel> kernel =
          tessel::compile(program.ir(), {.target = tessel::Target::cuda(arch),
                                         .pass_config = entry.pass_config,
                                         .fast_math = entry.fast_math,
                                         .lineinfo = entry.lineinfo});
      if (!kernel.ok()) {
        std::fprintf(stderr, "%s: %s\n", entry.Path().c_str(),
                     kernel.status().ToString().c_str());
        ++failed;
      }
    }
  }
  const tessel::jit::JitCounters c = tessel::jit::GetJitCounters();
  nlohmann::json out = {{"kernels", kernels},
                        {"failed", failed},
                        {"nvrtc_compiles", c.nvrtc_compiles},
                        {"disk_hits", c.disk_hits},
                        {"index_hits", c.index_hits},
                        {"memory_hits", c.memory_hits},
                        {"misses", c.misses}};
  std::printf("%s\n", out.dump().c_str());
  return failed == 0 ? 0 : 1;
}
