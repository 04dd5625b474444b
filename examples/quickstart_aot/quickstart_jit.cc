// The quickstart_aot kernel through tessel's JIT (NVRTC / ptxas at run
// time), writing C the same way, so that the two outputs can be compared
// byte for byte:
//   quickstart_jit --output jit.bin && quickstart_aot --output aot.bin
//   cmp jit.bin aot.bin
//   quickstart_jit --target=cpu    # the CPU interpreter (no GPU needed)
// Exit status: 0 every element matches, 1 a mismatch, 2 an error.
#include <iostream>
#include <string>
#include <vector>

#include "gemm_kernel.h"
#include "quickstart_data.h"
#include "tessel/tessel.h"

namespace T = tessel;
using namespace quickstart;

namespace {

absl::Status Run(const T::Target& target, std::vector<float>& c) {
  TESSEL_ASSIGN_OR_RETURN(T::Program program, QuickstartGemm(M, N, K));
  TESSEL_ASSIGN_OR_RETURN(T::CompiledKernel kernel,
                          T::compile(program, {.target = target}));
  std::vector<uint16_t> a = F16Matrix(M, K, ValueA);
  std::vector<uint16_t> b = F16Matrix(K, N, ValueB);
  if (target.kind() == T::Target::Kind::kCpu) {
    return kernel.launch({T::TensorView::Contiguous(a.data(), T::f16, {M, K}),
                          T::TensorView::Contiguous(b.data(), T::f16, {K, N}),
                          T::TensorView::Contiguous(c.data(), T::f32, {M, N})});
  }
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory da,
                          T::DeviceMemory::Allocate(a.size() * 2));
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory db,
                          T::DeviceMemory::Allocate(b.size() * 2));
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory dc,
                          T::DeviceMemory::Allocate(c.size() * 4));
  TESSEL_RETURN_IF_ERROR(da.CopyFromHost(a.data(), a.size() * 2));
  TESSEL_RETURN_IF_ERROR(db.CopyFromHost(b.data(), b.size() * 2));
  TESSEL_RETURN_IF_ERROR(dc.CopyFromHost(c.data(), c.size() * 4));
  TESSEL_RETURN_IF_ERROR(
      kernel.launch({T::TensorView::Contiguous(da.ptr(), T::f16, {M, K}),
                     T::TensorView::Contiguous(db.ptr(), T::f16, {K, N}),
                     T::TensorView::Contiguous(dc.ptr(), T::f32, {M, N})}));
  TESSEL_RETURN_IF_ERROR(T::Synchronize());
  return dc.CopyToHost(c.data(), c.size() * 4);
}

}  // namespace

int main(int argc, char** argv) {
  std::string output, want = "gpu";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--output" && i + 1 < argc) {
      output = argv[++i];
    } else if (arg == "--target=cpu" || arg == "--target=gpu") {
      want = arg.substr(9);
    } else {
      std::cerr << "usage: quickstart_jit [--target=cpu|gpu] [--output FILE]\n";
      return 2;
    }
  }
  const T::Target target =
      want == "cpu" ? T::Target::cpu() : T::Target::detect();
  std::vector<float> c(size_t{M} * N, NAN);
  if (absl::Status s = Run(target, c); !s.ok()) {
    std::cerr << "quickstart_jit: " << s << "\n";
    return 2;
  }
  if (!output.empty() && !WriteBytes(output, c)) {
    std::cerr << "quickstart_jit: cannot write " << output << "\n";
    return 2;
  }
  const int64_t wrong = CountWrong(c, "quickstart_jit");
  if (wrong > 0) {
    std::cerr << "quickstart_jit: MISMATCH in " << wrong << " of " << M * N
              << " elements\n";
    return 1;
  }
  std::cout << "quickstart_jit: gemm " << M << "x" << N << "x" << K << " on "
            << target.arch() << ": ok (" << M * N << " elements match)\n";
  return 0;
}
