// nvJitLink: PTX text in, cubin out. ptxas runs inside nvJitLink, so no GPU
// is needed.
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
#ifndef TESSEL_JIT_PTX_COMPILE_H_
#define TESSEL_JIT_PTX_COMPILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

// The nvJitLink options for `options` and a resolved arch, as passed:
// "-arch=<arch>", "-lineinfo" when asked, then `extra` as given (e.g.
// "-Xptxas=-O3"). The PTX half of NormalizedOptionsFor.
std::vector<std::string> PtxLinkOptions(const CompileOptions& options,
                                        const std::string& arch);

// nvJitLink's version, "13.0"; "unknown" when it cannot say.
std::string NvJitLinkVersion();

// Compiles the PTX module `source.text` for `arch` (resolved: "sm_90a") in
// this process. Cubin::lowered_entry is `source.entry`; Cubin::log holds
// nvJitLink's info log (ptxas warnings). Headers are refused (InvalidArgument).
// A compile error is InvalidArgument with nvJitLink's log, the arch and
// options, the PTX lines ptxas names quoted with their numbers, and the path
// of a file holding the full PTX. Counted as a compile (JitCounters).
absl::StatusOr<Cubin> CompilePtx(const CudaSource& source,
                                 const CompileOptions& options,
                                 const std::string& arch);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_PTX_COMPILE_H_
