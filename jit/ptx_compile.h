// ptxas: PTX text in, cubin out. Runs the toolkit's `ptxas` program (a
// whole-program compile at -O3, as nvcc and Triton do), so no GPU is needed.
//
//   tessel::jit::CudaSource source{
//       .text = ".version 8.0\n.target sm_90a\n.address_size 64\n"
//               ".visible .entry add1(.param .u64 x) { ... }\n",
//       .entry = "add1",
//       .language = tessel::jit::SourceLanguage::kPtx};
//   ASSIGN_OR_RETURN(tessel::jit::Cubin cubin,
//                    tessel::jit::Compile(source, {.arch = "sm_90a"}));
//   // cubin.lowered_entry: "add1", the .entry name as written
//
// Compile (jit/nvrtc.h) sends kPtx sources here; call it rather than
// CompilePtx: it resolves the arch and keeps isolated compiles' fork() away
// from a compile in flight. Of CompileOptions only arch, lineinfo and extra
// apply: std, fast math and defines shape CUDA C++, not PTX.
//
// Which ptxas: $TESSEL_PTXAS when set (a path to the program; no $PATH
// search, no fallback when it is not there), else <CudaToolkitRoot()>/bin/ptxas
// (jit/cuda_paths.h: $CUDA_HOME, $CUDA_PATH, the toolkit tessel was built
// against). Looked up on every call, so a change of either takes effect.
//
// Why not an in-process library: nvJitLink compiles PTX as relocatable code
// (ptxas --compile-only), which costs registers (an rmsnorm kernel: 48 there,
// 32 here); nvPTXCompiler, the whole-program library, is a static archive the
// toolkit does not ship everywhere. ptxas ships with every toolkit.
#ifndef TESSEL_JIT_PTX_COMPILE_H_
#define TESSEL_JIT_PTX_COMPILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

// The ptxas options for `options` and a resolved arch, as passed:
// "-arch=<arch>", "-lineinfo" when asked, then `extra` as given (ptxas
// flags: "-O2", "-maxrregcount=64"). The PTX half of NormalizedOptionsFor.
std::vector<std::string> PtxasOptions(const CompileOptions& options,
                                      const std::string& arch);

// The ptxas to run (see above), or FailedPrecondition naming where it looked.
absl::StatusOr<std::string> PtxasPath();

// PtxasPath(), looked up once per value of $TESSEL_PTXAS, $CUDA_HOME and
// $CUDA_PATH: every lowering and cache lookup asks it.
absl::StatusOr<std::string> KnownPtxasPath();

// Whether KnownPtxasPath() finds an executable file: PTX can be compiled
// here.
bool PtxasAvailable();

// Compiles the PTX module `source.text` for `arch` (resolved: "sm_90a") with
// ptxas, in a private temp folder (under $TMPDIR, else /tmp) removed
// afterwards. Cubin::lowered_entry is `source.entry`; Cubin::log holds what
// ptxas printed (warnings); Cubin::compile_ms is the wall time of the whole
// call. Headers are refused (InvalidArgument). No ptxas is
// FailedPrecondition. A compile error (or a flag ptxas refuses) is
// InvalidArgument with ptxas's log, the arch and options, the PTX lines
// ptxas names quoted with their numbers, and the path of a file holding the
// full PTX. A ptxas killed by a signal is Internal naming it. Thread-safe.
// Counted as a compile (JitCounters).
absl::StatusOr<Cubin> CompilePtx(const CudaSource& source,
                                 const CompileOptions& options,
                                 const std::string& arch);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_PTX_COMPILE_H_
