#include "tessel/interpret.h"

#include <utility>

#include "src/interp/interpreter.h"
#include "src/ir/program.h"

namespace tessel {

absl::Status interpret(const Program& program, std::vector<HostTensor*> args,
                       const InterpretOptions& options) {
  if (!program.ir().body.defined()) {
    return absl::InvalidArgumentError(
        "interpret: the Program is empty (default-constructed); "
        "ProgramBuilder::finish() returns one to run");
  }
  return interp::Run(
      program.ir(), std::move(args),
      {.num_threads = options.num_threads, .print = options.print});
}

}  // namespace tessel
