#include "tessel/interpret.h"

#include <utility>

#include "src/interp/interpreter.h"
#include "src/ir/program.h"

namespace tessel {

absl::Status interpret(const Program& program, std::vector<HostTensor*> args,
                       const InterpretOptions& options) {
  return interp::Run(
      program.ir(), std::move(args),
      {.num_threads = options.num_threads, .print = options.print});
}

}  // namespace tessel
