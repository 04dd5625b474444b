// The program index: compile()'s memo across processes. For each program
// compiled with the disk cache on, a record of what the passes made of it
// (the kernel's cache key, entry and launch shape); a fresh process that
// compiles the same program finds the record and the cubin, and runs no
// pass and no codegen (a warm disk hit per manifest kernel: 0.7-1.7 ms of
// lowering before, 0.15-0.33 ms now, docs/benchmarks.md session 22).
//
//   std::optional<std::string> key = ProgramIndexKey(program, options);
//   if (key) {
//     if (std::shared_ptr<KernelImpl> hit = FindIndexed(*key, program,
//                                                       options))
//       return hit;
//   }
//   ... passes, codegen, the kernel cache ...
//   if (key) RecordIndexed(*key, *impl);
//
// The key hashes (XXH3-128) everything a kernel depends on: the program's
// structure (ir::StructuralKey, the memo's notion of equal programs), the
// target, pass config and flags (ProgramCache::KeyOf), this build of tessel
// (LoweringBuildId: a hash of its sources), the TESSEL_ variables (the A/B
// switches some passes read) and ptxas's version. The record says which
// cubin; the disk cache stays keyed on the generated source, and a record
// whose cubin is gone (evicted, cleared, another NVRTC) is a miss. Records
// live beside the entries (DiskCache::RecordPath); a damaged or foreign one
// is a miss. The source and lowered IR of an indexed kernel are made again
// (the passes run once more) only when a caller asks for them.
#ifndef TESSEL_SRC_RUNTIME_PROGRAM_INDEX_H_
#define TESSEL_SRC_RUNTIME_PROGRAM_INDEX_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "jit/disk_cache.h"
#include "src/ir/program.h"
#include "src/runtime/kernel_impl.h"
#include "tessel/compile.h"

namespace tessel::runtime {

// "tessel-lowering <16 hex>": a hash of this build's sources (CMake).
std::string_view LoweringBuildId();

// nullopt where the index does not apply: a CPU target, an isolated
// compile, or a run that dumps IR or source (a dump must come from a real
// lowering). The caller checks that the disk cache is on.
std::optional<std::string> ProgramIndexKey(const ir::Program& program,
                                           const CompileOptions& options);

// The kernel `key`'s record describes, with its cubin from the kernel cache;
// null on any miss (no record, a damaged one, no cubin).
std::shared_ptr<KernelImpl> FindIndexed(const std::string& key,
                                        const ir::Program& program,
                                        const CompileOptions& options);

// Writes `impl`'s record under `key` into `disk` (nothing when its grid
// cannot be written down: the next process lowers again).
void RecordIndexed(const std::string& key, const ir::Program& program,
                   const KernelImpl& impl, jit::DiskCache& disk);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_PROGRAM_INDEX_H_
