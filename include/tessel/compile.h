// Compiling a tile program into a launchable kernel.
//
//   absl::StatusOr<tessel::CompiledKernel> k = tessel::compile(
//       program, {.target = tessel::Target::sm90a(),
//                 .pass_config = {.dump_ir = "/tmp/ir"}});
//   std::cout << k->source();   // the generated CUDA C++
//   RETURN_IF_ERROR(k->launch({a, b, c}, stream));   // see runtime.h
//
//   // No GPU: the same program on the CPU interpreter, host pointers.
//   ASSIGN_OR_RETURN(tessel::CompiledKernel cpu,
//                    tessel::compile(program, {.target =
//                    tessel::Target::cpu()}));
//   RETURN_IF_ERROR(cpu.launch({a_host, b_host, c_host}));
//
// For a CUDA target compile() runs the scheduler passes, the CUDA codegen
// and NVRTC (through the disk cache). An explicit target compiles without a
// GPU; the kernel is loaded onto the device at its first launch.
// For Target::cpu() it verifies the program and compiles it for the
// interpreter (docs/interpreter.md): no NVRTC, GPU or cache; pass_config,
// fast_math, lineinfo and isolated do not apply.
#ifndef TESSEL_COMPILE_H_
#define TESSEL_COMPILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessel/runtime.h"

namespace tessel {

namespace ir {
struct Program;
}  // namespace ir
class Program;

// What the code is generated for.
class Target {
 public:
  enum class Kind { kCuda, kCpu };

  // The arch of device 0 ("sm_90a" on an H200). Without a GPU the target
  // carries the Unavailable status, which compile() returns.
  static Target detect();
  static Target sm80();
  static Target sm90a();
  // Any "sm_XY[a]" arch.
  static Target cuda(std::string arch);
  // The CPU interpreter: launch() runs the program on host memory, with
  // the interpreter's exact numerics and its user-bug checks.
  static Target cpu();

  Kind kind() const { return kind_; }
  const std::string& arch() const { return arch_; }
  int sm() const { return sm_; }  // 80, 90, ...
  // The most shared memory one block may use (opt-in limit), in bytes.
  int max_shared_bytes() const { return max_shared_bytes_; }
  const absl::Status& status() const { return status_; }
  std::string ToString() const;

 private:
  Kind kind_ = Kind::kCuda;
  std::string arch_;
  int sm_ = 0;
  int max_shared_bytes_ = 0;
  absl::Status status_;
};

// Switches of the scheduler, as TileLang's pass configs. Part of the cache
// key (it changes the generated source).
struct PassConfig {
  bool disable_tma_lower = false;         // accepted; no TMA path yet
  bool disable_warp_specialized = false;  // accepted; no warp specialization
  bool disable_async_copy = false;        // no cp.async: plain loads/stores
  bool disable_thread_sync = false;       // no barrier insertion (tests only)
  bool disable_wgmma = false;  // sm_90a: mma.sync instead of wgmma.mma_async
  // A folder: the IR after every pass is written there (also
  // $TESSEL_DUMP_IR).
  std::string dump_ir;

  std::string ToString() const;  // "async_copy=1 thread_sync=1 ..."
};

struct CompileOptions {
  Target target = Target::detect();
  PassConfig pass_config;
  bool fast_math = false;
  bool lineinfo = false;
  // Compile in a child process, so that a compiler crash is a Status.
  bool isolated = false;
};

absl::StatusOr<CompiledKernel> compile(const Program& program,
                                       const CompileOptions& options = {});
// The same from the tile IR (tessel's own stages and tests).
absl::StatusOr<CompiledKernel> compile(const ir::Program& program,
                                       const CompileOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_COMPILE_H_
