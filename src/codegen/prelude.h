// The device prelude every generated kernel includes, as NVRTC headers by
// content (embedded into the library at build time from prelude/*.cuh).
//
//   jit::CudaSource src{.text = "#include \"tessel_prelude.cuh\"\n...",
//                       .entry = "k", .headers = codegen::PreludeHeaders()};
#ifndef TESSEL_SRC_CODEGEN_PRELUDE_H_
#define TESSEL_SRC_CODEGEN_PRELUDE_H_

#include <vector>

#include "jit/nvrtc.h"

namespace tessel::codegen {

const std::vector<jit::CudaHeader>& PreludeHeaders();

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_PRELUDE_H_
