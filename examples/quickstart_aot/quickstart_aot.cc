// The quickstart's GEMM compiled ahead of time (docs/aot.md): no NVRTC and
// no tessel library but tessel::aot_runtime. quickstart_kernels.h is
// generated at build time by tessel_add_aot_kernels (CMakeLists.txt).
//
//   quickstart_aot                  # device 0; checks C against float64
//   quickstart_aot --output c.bin   # and writes C's bytes (f32, row-major)
//
// Exit status: 0 every element matches, 1 a mismatch, 2 an error (a bad
// flag, a launch error), 3 no GPU (the message says why).
#include <iostream>
#include <string>
#include <vector>

#include "quickstart_data.h"
#include "quickstart_kernels.h"

namespace aot = tessel::aot;
using namespace quickstart;

namespace {

aot::Status Run(std::vector<float>& c) {
  const std::vector<uint16_t> a = F16Matrix(M, K, ValueA);
  const std::vector<uint16_t> b = F16Matrix(K, N, ValueB);
  aot::DeviceBuffer da, db, dc;
  TESSEL_AOT_RETURN_IF_ERROR(aot::DeviceBuffer::Allocate(a.size() * 2, &da));
  TESSEL_AOT_RETURN_IF_ERROR(aot::DeviceBuffer::Allocate(b.size() * 2, &db));
  TESSEL_AOT_RETURN_IF_ERROR(aot::DeviceBuffer::Allocate(c.size() * 4, &dc));
  TESSEL_AOT_RETURN_IF_ERROR(da.CopyFromHost(a.data(), a.size() * 2));
  TESSEL_AOT_RETURN_IF_ERROR(db.CopyFromHost(b.data(), b.size() * 2));
  TESSEL_AOT_RETURN_IF_ERROR(dc.CopyFromHost(c.data(), c.size() * 4));
  // One tensor per kernel parameter: device pointer and shape.
  TESSEL_AOT_RETURN_IF_ERROR(quickstart_gemm(
      {da.ptr(), {M, K}}, {db.ptr(), {K, N}}, {dc.ptr(), {M, N}}));
  TESSEL_AOT_RETURN_IF_ERROR(aot::Synchronize());
  return dc.CopyToHost(c.data(), c.size() * 4);
}

}  // namespace

int main(int argc, char** argv) {
  std::string output;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--output" && i + 1 < argc) {
      output = argv[++i];
    } else {
      std::cerr << "usage: quickstart_aot [--output FILE]\n";
      return 2;
    }
  }
  if (const std::string why = aot::GpuUnavailableReason(); !why.empty()) {
    std::cerr << "quickstart_aot: no GPU to run on (" << why
              << "); the kernels are compiled ahead of time for";
    const aot::Kernel& kernel = quickstart_gemm_kernel();
    for (int i = 0; i < kernel.variant_count(); ++i)
      std::cerr << " " << kernel.variant(i).arch;
    std::cerr << "\n";
    return 3;
  }
  std::vector<float> c(size_t{M} * N, NAN);  // every element must be written
  if (aot::Status s = Run(c); !s.ok()) {
    std::cerr << "quickstart_aot: " << s.message() << "\n";
    return 2;
  }
  if (!output.empty() && !WriteBytes(output, c)) {
    std::cerr << "quickstart_aot: cannot write " << output << "\n";
    return 2;
  }
  const int64_t wrong = CountWrong(c, "quickstart_aot");
  if (wrong > 0) {
    std::cerr << "quickstart_aot: MISMATCH in " << wrong << " of " << M * N
              << " elements\n";
    return 1;
  }
  std::cout << "quickstart_aot: gemm " << M << "x" << N << "x" << K
            << " ahead of time: ok (" << M * N << " elements match)\n";
  return 0;
}
