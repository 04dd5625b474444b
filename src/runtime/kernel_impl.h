// What a CompiledKernel holds: for a GPU target the generated source, the
// cubin, and what launch() needs to check tensors and compute the grid; for
// Target::cpu() the interpreter's executable instead of source and cubin.
#ifndef TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
#define TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_

#include <memory>
#include <string>
#include <vector>

#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "src/ir/program.h"
#include "src/passes/lowering_state.h"

namespace tessel::interp {
struct Executable;
}  // namespace tessel::interp

namespace tessel::runtime {

struct KernelImpl {
  std::string name;
  std::string source;
  std::string entry;
  std::string lowered_ir;
  std::string arch;
  int threads = 0;
  int64_t dynamic_smem_bytes = 0;
  std::vector<ir::Buffer> params;
  std::vector<ir::Var> dims;
  std::vector<ir::Expr> grid;
  std::vector<passes::AlignmentRequirement> alignment;
  std::vector<passes::TensorMapParam> tensor_maps;  // encoded at launch
  bool persistent = false;            // grid.x capped at the device's SM count
  std::vector<std::string> schedule;  // CompiledKernel::schedule()
  jit::CachedCubin cubin;
  jit::KernelSignature signature;
  // Set for Target::cpu() (src/runtime/cpu_kernel.h): launch() runs this on
  // host memory; source and cubin are empty.
  std::shared_ptr<const interp::Executable> interpreter;
};

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
