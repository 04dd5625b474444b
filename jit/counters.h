// Process-wide JIT counters, so tools and tests can prove where kernels came
// from (e.g. "a fresh process after warmup made zero NVRTC calls").
//
//   tessel::jit::JitCounters before = tessel::jit::GetJitCounters();
//   ...
//   EXPECT_EQ(tessel::jit::GetJitCounters().nvrtc_compiles,
//             before.nvrtc_compiles);
#ifndef TESSEL_JIT_COUNTERS_H_
#define TESSEL_JIT_COUNTERS_H_

#include <cstdint>

namespace tessel::jit {

struct JitCounters {
  uint64_t nvrtc_compiles = 0;   // nvrtcCompileProgram calls (isolated too),
                                 // and PTX compiles through ptxas: any
                                 // compile, so "zero compiles" proofs hold
  uint64_t memory_hits = 0;      // served from the in-process cache
  uint64_t disk_hits = 0;        // served from the disk cache
  uint64_t misses = 0;           // neither: compiled
  uint64_t corrupt_entries = 0;  // disk entries damaged or another key's:
                                 // removed
  uint64_t untrusted_files = 0;  // entries not read: another user's or
                                 // writable by others (or in such a folder)
  uint64_t module_loads = 0;     // cuModuleLoadData calls
  uint64_t index_hits = 0;       // compile()s the program index answered:
                                 // no pass ran (src/runtime/program_index.h)
};

JitCounters GetJitCounters();

namespace internal {
enum class Counter {
  kNvrtcCompiles,
  kMemoryHits,
  kDiskHits,
  kMisses,
  kCorruptEntries,
  kUntrustedFiles,
  kModuleLoads,
  kIndexHits,
};
void Count(Counter counter);
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_COUNTERS_H_
