// What a CompiledKernel holds: the generated source, the cubin, and what
// launch() needs to check tensors and compute the grid.
#ifndef TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
#define TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_

#include <string>
#include <vector>

#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "src/ir/program.h"
#include "src/passes/lowering_state.h"

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
  jit::CachedCubin cubin;
  jit::KernelSignature signature;
};

// Evaluates an integer expression of the program's sizes (grid extents).
absl::StatusOr<int64_t> EvalInt(
    const ir::Expr& e,
    const std::unordered_map<const ir::VarNode*, int64_t>& values);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
