// Conversions between the public DSL handles (include/tessel/) and the IR
// handles (src/ir/); for tessel's own code only.
//
//   ir::Expr e = dsl::Access::ToIr(user_expr);
//   tessel::Program p = dsl::Access::MakeProgram(std::move(ir_program));
#ifndef TESSEL_SRC_DSL_ACCESS_H_
#define TESSEL_SRC_DSL_ACCESS_H_

#include <memory>
#include <utility>
#include <vector>

#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/program.h"
#include "tessel/builder.h"
#include "tessel/expr.h"
#include "tessel/program.h"

namespace tessel::dsl {

struct Access {
  static ir::Expr ToIr(const tessel::Expr& e) { return ir::Expr(e.node_); }
  static tessel::Expr FromIr(const ir::Expr& e) {
    tessel::Expr out;
    out.node_ = e.node();
    return out;
  }
  static ir::Buffer ToIr(const tessel::Buffer& b) {
    return ir::Buffer(b.node_);
  }
  static tessel::Buffer FromIr(const ir::Buffer& b) {
    tessel::Buffer out;
    out.node_ = b.node();
    return out;
  }
  static tessel::BufferRef MakeRef(tessel::Buffer buffer,
                                   std::vector<Index> indices,
                                   SourceLocation loc) {
    return tessel::BufferRef(std::move(buffer), std::move(indices), loc);
  }
  static tessel::ScalarVar MakeVar(tessel::BufferRef ref) {
    return tessel::ScalarVar(std::move(ref));
  }
  static tessel::Program MakeProgram(ir::Program program) {
    tessel::Program out;
    out.impl_ = std::make_shared<const ir::Program>(std::move(program));
    return out;
  }
};

}  // namespace tessel::dsl

#endif  // TESSEL_SRC_DSL_ACCESS_H_
