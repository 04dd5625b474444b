// A tile program precompiled into a tree of closures, ready to run on host
// tensors any number of times.
//
//   absl::StatusOr<std::shared_ptr<const interp::Executable>> exe =
//       interp::Compile(program);
//   // then interp::Run(**exe, {&a, &b, &c}, {}) as often as needed
//
// Compiling resolves every variable and buffer to a slot of the Frame and
// checks what can be checked before running (unbound variables, buffers used
// outside their allocation, unknown intrinsics, atomic dtypes, absurd tile
// sizes).
#ifndef TESSEL_SRC_INTERP_EXECUTABLE_H_
#define TESSEL_SRC_INTERP_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/interp/frame.h"
#include "src/ir/program.h"

namespace tessel::interp {

struct CompiledKernel {
  Site site;
  std::vector<IntFn> grid;           // x first
  std::vector<int> block_var_slots;  // one per grid dim
  int threads = 1;
  StmtFn body;
};

struct Executable {
  std::string name;
  ir::Program program;  // keeps the IR (and the nodes slots refer to) alive
  int num_vars = 0;
  std::vector<int> dim_slots;    // program.dims, in order
  std::vector<int> param_slots;  // program.params, in order
  // Per parameter and dimension: the shape expression, and the slot of the
  // symbolic size it binds when it is exactly a variable (else -1).
  std::vector<std::vector<IntFn>> param_shapes;
  std::vector<std::vector<int>> param_dim_vars;
  // Every buffer slot, with node, dtype, scope and (per-block) shape set.
  std::vector<BufferInstance> buffers;
  std::vector<CompiledKernel> kernels;  // in launch order
  // Blocks must run in order on one thread: the program prints, or reads a
  // global tensor that it also updates atomically (deferring the atomics of
  // a threaded run would change what it reads).
  bool serial_only = false;
  // The program takes tickets (T::atomic_ticket): serial_only, and the
  // blocks run in a scrambled order (interpreter.cc, BlockOrder), so that
  // "the block that draws the last ticket" is seldom the last block index.
  bool takes_tickets = false;
};

// Shared, fragment and local tiles of more elements are ResourceExhausted
// at Compile (each element costs the interpreter 9 bytes per block; no GPU
// block holds a millionth of that many).
inline constexpr int64_t kMaxTileElements = int64_t{1} << 24;

absl::StatusOr<std::shared_ptr<const Executable>> Compile(
    const ir::Program& program);

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_EXECUTABLE_H_
