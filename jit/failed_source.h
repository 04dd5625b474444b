// Internal to jit/: where a compile that failed leaves its source, so that
// the error can name a file the user opens (NVRTC and ptxas alike).
//
//   absl::StrAppend(&message, "\nfull source: ",
//                   internal::SaveFailedSource(source));
//   // ".../tessel-1000-failed/add1-0123456789abcdef.ptx"
#ifndef TESSEL_JIT_FAILED_SOURCE_H_
#define TESSEL_JIT_FAILED_SOURCE_H_

#include <string>

#include "jit/nvrtc.h"

namespace tessel::jit::internal {

// A file name made from the entry ("add1.cu", "gemm_128__64_.cu"; ".ptx" for
// PTX): compilers name the program in their logs, and this keeps them
// readable.
std::string SourceFileName(const CudaSource& source);

// Writes `source.text` to <tmp>/tessel-<uid>-failed/<name>-<hash>.<ext> and
// returns the path, or a parenthesized sentence saying it could not.
std::string SaveFailedSource(const CudaSource& source);

}  // namespace tessel::jit::internal

#endif  // TESSEL_JIT_FAILED_SOURCE_H_
