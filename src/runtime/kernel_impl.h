// What a CompiledKernel holds: for a GPU target the generated source, the
// cubin, and what launch() needs to check tensors and compute the grid; for
// Target::cpu() the interpreter's executable instead of source and cubin.
#ifndef TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
#define TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "jit/kernel_cache.h"
#include "jit/launch.h"
#include "src/ir/program.h"
#include "src/passes/lowering_state.h"
#include "tessel/compile.h"

namespace tessel::interp {
struct Executable;
}  // namespace tessel::interp

namespace tessel::runtime {

struct StridedSpecializations;  // strided_views.h

// A parameter of a strided specialization: the dims (program.dims) that
// carry its strides at launch; an undefined Var for a unit innermost stride
// compiled in as the constant 1.
struct StrideParam {
  int param = 0;
  std::vector<ir::Var> strides;  // one per dimension
};

// The lowered program as text, printed on first use: few callers ask for it,
// and printing it was a tenth of a disk-cache hit's time.
class LoweredIrText {
 public:
  explicit LoweredIrText(ir::Program program) : program_(std::move(program)) {}
  const std::string& text() const;

 private:
  mutable absl::once_flag once_;
  mutable ir::Program program_;  // released once printed
  mutable std::string text_;
};

// The source and lowered IR of a kernel found through the program index
// (program_index.h), which has neither at hand: the passes run again, once,
// for a caller who reads them (few do).
class Relowering {
 public:
  Relowering(ir::Program program, CompileOptions options)
      : program_(std::move(program)), options_(std::move(options)) {}
  const std::string& source() const;
  const std::string& lowered_ir() const;

 private:
  void Run() const;
  mutable absl::once_flag once_;
  const ir::Program program_;
  const CompileOptions options_;
  mutable std::string source_, lowered_ir_;
};

struct KernelImpl {
  std::string name;
  std::string source;  // empty when `relowering` makes it
  std::string entry;
  std::shared_ptr<const LoweredIrText> lowered_ir;  // shared by copies
  std::shared_ptr<const Relowering> relowering;     // see above
  std::string arch;
  int threads = 0;
  int64_t dynamic_smem_bytes = 0;
  std::vector<ir::Buffer> params;
  std::vector<ir::Var> dims;
  std::vector<ir::Expr> grid;
  std::vector<passes::AlignmentRequirement> alignment;
  std::vector<passes::TensorMapParam> tensor_maps;  // encoded at launch
  bool persistent = false;  // grid.x capped at the device's SM count
  int cluster_size = 1;     // blocks per cluster (persistent: capped at the
                            // clusters that fit the device at once)
  std::vector<std::string> schedule;  // CompiledKernel::schedule()
  jit::CachedCubin cubin;
  jit::KernelSignature signature;
  // Set for Target::cpu() (src/runtime/cpu_kernel.h): launch() runs this on
  // host memory; source and cubin are empty.
  std::shared_ptr<const interp::Executable> interpreter;
  // Target::cpu(): per parameter, whether the program writes it (launch
  // checks that its memory is writable, host_memory.h).
  std::vector<bool> param_written;
  // A CUDA kernel: the program and options it was compiled from, and the
  // variants made for strided views so far (strided_views.h).
  std::shared_ptr<const ir::Program> program;
  // (Not a default CompileOptions: its Target::detect() would start the
  // CUDA driver, and make a context, for every kernel compiled.)
  CompileOptions options{.target = Target::cpu()};
  std::shared_ptr<StridedSpecializations> specializations;
  // Set in such a variant: the strided parameters, bound at launch.
  std::vector<StrideParam> stride_params;
};

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_KERNEL_IMPL_H_
