// Linked into the test binaries that read the generated CUDA C++
// (tessel_add_test(... CUDA_TEXT)). The PTX emitter is on by default
// (CompileOptions::direct_ptx), so the kernels it spells would come back as
// PTX; $TESSEL_PTX=0, set before main, keeps the whole process on the CUDA
// backend, whether ctest or a person runs the binary.
#include <cstdlib>

namespace {

[[maybe_unused]] const bool kCudaText = [] {
  return setenv("TESSEL_PTX", "0", /*overwrite=*/1) == 0;
}();

}  // namespace
