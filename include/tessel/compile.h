// Compiling a tile program into a launchable kernel.
//
// clang-format off
//   absl::StatusOr<tessel::CompiledKernel> k = tessel::compile(
//       program, {.target = tessel::Target::sm90a(),
//                 .pass_config = {.dump_ir = "/tmp/ir"}});
//   std::cout << k->source();   // the generated CUDA C++
//   TESSEL_RETURN_IF_ERROR(k->launch({a, b, c}, stream));   // see runtime.h
//
//   // No GPU: the same program on the CPU interpreter, host pointers.
//   TESSEL_ASSIGN_OR_RETURN(
//       tessel::CompiledKernel cpu,
//       tessel::compile(program, {.target = tessel::Target::cpu()}));
//   TESSEL_RETURN_IF_ERROR(cpu.launch({a_host, b_host, c_host}));
// clang-format on
//
// For a CUDA target compile() runs the scheduler passes, the CUDA codegen
// and NVRTC (through the disk cache). An explicit target compiles without a
// GPU; the kernel is loaded onto the device at its first launch.
// For Target::cpu() it verifies the program and compiles it for the
// interpreter (docs/interpreter.md): no NVRTC, GPU or cache; fast_math,
// lineinfo and isolated do not apply. It also runs the sm_90a lowering
// (passes and codegen, with pass_config) and returns its error, so that a
// program the CPU target takes compiles for the GPU too.
#ifndef TESSEL_COMPILE_H_
#define TESSEL_COMPILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/runtime.h"
#include "tessel/target.h"

namespace tessel {

namespace ir {
struct Program;
}  // namespace ir
class Program;

struct CompileOptions {
  Target target = Target::detect();
  PassConfig pass_config;
  bool fast_math = false;
  bool lineinfo = false;
  // Compile in a child process, so that a compiler crash is a Status.
  bool isolated = false;
  // Kernels tessel's PTX emitter spells go straight to ptxas, without
  // NVRTC's C++ front end and NVVM: a cold compile takes about 40 % of the
  // time (docs/ptx_backend.md). The others, every kernel with fast_math,
  // and all of them where the toolkit has no ptxas, go through NVRTC.
  // false keeps every kernel on NVRTC; $TESSEL_PTX=0 (or 1) turns it off
  // (or on) for a whole process.
  bool direct_ptx = true;
};

// OK when `program`'s shared memory, as the scheduler plans it for `target`,
// fits the target's per-block limit; else ResourceExhausted listing the
// tiles. Runs the passes up to the planner (milliseconds, no NVRTC), so a
// factory can take fewer stages where an arch has less shared memory. Other
// lowering errors are left to compile(); the CPU target always fits.
absl::Status CheckSharedMemoryFits(const Program& program,
                                   const Target& target);

absl::StatusOr<CompiledKernel> compile(const Program& program,
                                       const CompileOptions& options = {});
// The same from the tile IR (tessel's own stages and tests).
absl::StatusOr<CompiledKernel> compile(const ir::Program& program,
                                       const CompileOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_COMPILE_H_
