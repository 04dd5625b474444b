// A tile program: name, parameters, body.
//
//   const ir::Program& p = ...;            // from tessel::Program::ir()
//   for (const ir::Buffer& t : p.params) ... // global tensors, launch order
//   for (const ir::Var& d : p.dims) ...      // symbolic sizes, bound at launch
//   ir::IRVisitor v; v.VisitStmt(p.body);
#ifndef TESSEL_SRC_IR_PROGRAM_H_
#define TESSEL_SRC_IR_PROGRAM_H_

#include <string>
#include <vector>

#include "src/ir/buffer.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

struct Program {
  std::string name;
  // Tensor parameters (scope kGlobal), in the order the launch passes them.
  std::vector<Buffer> params;
  // Symbolic sizes used in the params' shapes, in order of first declaration.
  // Each is bound at launch from the first param dimension that is exactly it.
  std::vector<Var> dims;
  // Usually one KernelNode (possibly inside Seq); the whole program's effect.
  Stmt body;
};

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_PROGRAM_H_
