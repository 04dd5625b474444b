// NVRTC: CUDA C++ text in, cubin out. No GPU needed when the arch is given.
//
//   tessel::jit::CudaSource source{
//       .text = "extern \"C\" __global__ void add1(float* x) { x[0] += 1; }",
//       .entry = "add1"};
//   ASSIGN_OR_RETURN(tessel::jit::Cubin cubin,
//                    tessel::jit::Compile(source, {.arch = "sm_90a"}));
//   // cubin.image: the ELF bytes; cubin.lowered_entry: "add1"
//
// The entry is handed to NVRTC as a name expression, so it may name an
// extern "C" kernel ("add1"), a C++ one ("ns::add1") or a template
// instance ("gemm<128, 64>"); Cubin::lowered_entry records the mangled name
// to look the function up by.
//
// Headers travel by content (CudaSource::headers): `#include "prelude.cuh"`
// resolves to the header named "prelude.cuh", never to a file on disk. Only
// the CUDA toolkit's include dirs (cuda_fp16.h, cccl) are searched.
//
// A PTX module compiles the same way, through ptxas (jit/ptx_compile.h):
//
//   tessel::jit::CudaSource ptx{.text = ptx_text,  // ".version ... .entry
//   add1"
//                               .entry = "add1",
//                               .language = tessel::jit::SourceLanguage::kPtx};
//
// A CUDA source may carry a PTX translation of itself (CudaSource::to_ptx,
// jit/ptx_translation.h): the kernel cache keys it on the CUDA text and runs
// the translation only on a miss. Compile() itself compiles `text`.
//
// Compile is thread-safe: different kernels compile in parallel threads.
#ifndef TESSEL_JIT_NVRTC_H_
#define TESSEL_JIT_NVRTC_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::jit {

struct CudaHeader {
  std::string name;     // as written in #include "..."
  std::string content;  // the header's full text
};

// What CudaSource::text holds, and so which compiler takes it.
enum class SourceLanguage {
  kCuda,  // CUDA C++, through NVRTC
  kPtx,   // a whole PTX module, through the ptxas program
};

// "cuda" or "ptx".
const char* SourceLanguageName(SourceLanguage language);

// How a kernel is launched: threads per block and dynamic shared memory
// per block. 0 threads: not known.
struct LaunchShape {
  int threads = 0;
  int64_t shared_bytes = 0;
};

// A PTX module and its .entry name as written: what CudaSource::to_ptx gives.
struct PtxModule {
  std::string text;
  std::string entry;
  // Optional: lets ptxas be asked for more blocks per SM (occupancy_fit.h).
  LaunchShape launch;
  // Optional: the same kernel spelled to do less in its loops with more
  // registers, compiled too where `text`'s cubin has registers to spare at
  // its blocks per SM; kept if it loses no block and spills no more
  // (occupancy_fit.h).
  std::function<absl::StatusOr<PtxModule>()> more_registers;
};

struct CudaSource {
  std::string text;                 // the translation unit
  std::string entry;                // the __global__ function to load
  std::vector<CudaHeader> headers;  // handed to NVRTC by content
  // Last, so that aggregate initializations without it still compile. For
  // kPtx, `entry` is the .entry name as written (no mangling) and `headers`
  // must be empty.
  SourceLanguage language = SourceLanguage::kCuda;
  // kCuda only, optional: the same kernel as a PTX module (tessel's PTX
  // emitter), made when the kernel cache misses; Unimplemented leaves the
  // kernel to NVRTC. `ptx_translator` names the translation and its build
  // (it keys the cache: cache_key.h); set both or neither.
  std::function<absl::StatusOr<PtxModule>()> to_ptx;
  std::string ptx_translator;
};

struct CompileOptions {
  // "sm_90a", "sm_80", ...; empty: detected from the current (or primary)
  // context's device. Give it to compile without a GPU.
  std::string arch;
  std::string std = "c++17";
  bool fast_math = false;
  bool lineinfo = false;
  // -DNAME=VALUE (-DNAME when VALUE is empty). Order does not matter.
  std::vector<std::pair<std::string, std::string>> defines;
  // Further NVRTC flags, passed in the order given after the others.
  // Precompiled-header flags (-pch, --use-pch, ...) are refused.
  std::vector<std::string> extra;
};

struct Cubin {
  std::string image;          // the cubin (ELF) bytes
  std::string lowered_entry;  // the entry's name in the image
  std::string arch;           // "sm_90a"
  std::string log;            // the compiler's log (warnings), may be empty
  double compile_ms = 0;      // compile time; 0 when it came from a cache
};

// The arch to compile for: options.arch when set (checked to be an "sm_*"
// arch), else the device's (Unavailable without a GPU).
absl::StatusOr<std::string> ResolveArch(const CompileOptions& options);

// The canonical NVRTC flags for `options` and a resolved arch: arch, std,
// fast math, lineinfo, the defines sorted, then `extra` as given. Two option
// sets that compile the same give the same list. Include dirs (paths) are not
// part of it.
std::vector<std::string> NormalizedOptions(const CompileOptions& options,
                                           const std::string& arch);

// The flags that shape a cubin of `language`: NormalizedOptions for kCuda,
// PtxasOptions (jit/ptx_compile.h) for kPtx, whose cubins std, fast math
// and defines do not change.
std::vector<std::string> NormalizedOptionsFor(SourceLanguage language,
                                              const CompileOptions& options,
                                              const std::string& arch);

// NVRTC's version, "13.0".
std::string NvrtcVersion();

// The SM numbers NVRTC compiles for (75, 80, ..., 90, ...); empty when it
// cannot say.
std::vector<int> NvrtcSupportedSms();

// Compiles `source` in this process: NVRTC for kCuda, ptxas (a program it
// runs) for kPtx (CompilePtx). A compile error is InvalidArgument carrying the
// compiler's log, the options, the offending source lines quoted with their
// numbers and the path of a file holding the full source.
absl::StatusOr<Cubin> Compile(const CudaSource& source,
                              const CompileOptions& options);

namespace internal {
// Compile with the arch already resolved, without taking the lock that keeps
// fork() away from running compiles. For the isolated child only.
absl::StatusOr<Cubin> CompileInChild(const CudaSource& source,
                                     const CompileOptions& options);

// Held shared by in-process compiles and exclusively around fork(), so a
// child never inherits an NVRTC call half done by another thread.
void LockCompilesForFork();
void UnlockCompilesForFork();
}  // namespace internal

}  // namespace tessel::jit

#endif  // TESSEL_JIT_NVRTC_H_
