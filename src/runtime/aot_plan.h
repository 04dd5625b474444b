// What an ahead-of-time launch function needs of one compiled kernel
// (tools/aot, docs/aot.md), as plain data: the cubin exactly as compile()
// makes it, and the launch compile()'s launcher computes (parameters and
// their shapes, grid, threads, shared memory, TMA descriptors, alignment
// needs, a persistent grid, clusters), with the size expressions spelled as
// C++ over the program's sizes (`tessel_d0`, ... for program.dims).
//
//   ASSIGN_OR_RETURN(runtime::AotKernelPlan plan,
//                    runtime::PlanAot(program, {.target = Target::sm90a()}));
//   plan.cubin;    // the bytes the JIT loads for this program and arch
//   plan.grid[0];  // "tessel::aot::CeilDiv(tessel_d1, int64_t{128})"
#ifndef TESSEL_SRC_RUNTIME_AOT_PLAN_H_
#define TESSEL_SRC_RUNTIME_AOT_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/compile.h"
#include "tessel/dtype.h"
#include "tessel/program.h"

namespace tessel::runtime {

struct AotDim {
  enum class Kind { kConstant, kSize, kExpression };
  Kind kind = Kind::kConstant;
  int64_t value = 0;  // kConstant
  int size = 0;       // kSize: the index into AotKernelPlan::sizes
  std::string cpp;    // kExpression: C++ over tessel_d0, ...
  std::string text;   // kExpression: as the user wrote it ("K / 2")
};

struct AotParam {
  std::string name;  // the user's tensor name ("A")
  DataType dtype = DataType::kF32;
  std::vector<AotDim> shape;
  std::string expected;  // "f16[M,256]"
};

struct AotTensorMap {
  int param = 0;
  std::vector<int64_t> box;  // outermost first
  int swizzle_bytes = 0;
  int data_type = 0;  // a CUtensorMapDataType value
};

struct AotAlignment {
  int param = 0;
  int multiple = 1;
  std::string reason;
};

struct AotKernelPlan {
  std::string name;   // the program's name
  std::string arch;   // "sm_90a"
  std::string cubin;  // the image
  std::string entry;  // its kernel's name in the image
  std::vector<AotParam> params;
  std::vector<std::string> sizes;  // program.dims' names (tessel_d0, ...)
  std::vector<std::string> grid;   // three C++ extents over tessel_d0, ...
  int threads = 0;
  int64_t dynamic_smem_bytes = 0;
  bool persistent = false;
  int cluster_size = 1;
  std::vector<AotTensorMap> tensor_maps;  // after the sizes, in order
  std::vector<AotAlignment> alignment;
  size_t kernel_params = 0;  // pointers + sizes + tensor maps
};

// Compiles `program` as compile() does for options.target (through the
// kernel cache, PTX emitter + ptxas or NVRTC alike) and describes its launch.
// InvalidArgument for the CPU target and for a launch a plan cannot spell.
absl::StatusOr<AotKernelPlan> PlanAot(const Program& program,
                                      const CompileOptions& options);

}  // namespace tessel::runtime

#endif  // TESSEL_SRC_RUNTIME_AOT_PLAN_H_
