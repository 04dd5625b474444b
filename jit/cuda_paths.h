// Where the CUDA toolkit's headers are, for NVRTC's include path.
//
//   std::vector<std::string> dirs = tessel::jit::CudaIncludeDirs();
//   // {"/usr/local/cuda/include", "/usr/local/cuda/include/cccl"}
#ifndef TESSEL_JIT_CUDA_PATHS_H_
#define TESSEL_JIT_CUDA_PATHS_H_

#include <string>
#include <vector>

namespace tessel::jit {

// The toolkit root: $CUDA_HOME, else $CUDA_PATH, else the toolkit tessel was
// built against. Empty when none of them holds include/cuda_fp16.h.
std::string CudaToolkitRoot();

// include/ and, where present (CUDA 13 keeps CCCL there), include/cccl.
std::vector<std::string> CudaIncludeDirs();

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CUDA_PATHS_H_
