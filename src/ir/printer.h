// Deterministic text of programs, statements and expressions, in the spirit
// of TileLang's script; the format of golden tests and of TESSEL_DUMP_IR.
//
//   std::cout << ir::ToString(program);
//   std::cout << ir::ToString(program, {.locations = true});  // "# gemm.cc:42"
//   LOG(INFO) << ir::ToString(expr);
//
// Names are the user's; a clash (two loop variables named i) prints as i, i_1.
#ifndef TESSEL_SRC_IR_PRINTER_H_
#define TESSEL_SRC_IR_PRINTER_H_

#include <ostream>
#include <string>

#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/program.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

struct PrintOptions {
  bool locations = false;  // end each op's line with "# file.cc:line"
  int indent = 2;
};

std::string ToString(const Program& program, const PrintOptions& options = {});
std::string ToString(const Stmt& stmt, const PrintOptions& options = {});
std::string ToString(const Expr& expr);
std::string ToString(const Region& region);

std::ostream& operator<<(std::ostream& os, const Expr& expr);
std::ostream& operator<<(std::ostream& os, const Stmt& stmt);
std::ostream& operator<<(std::ostream& os, const Program& program);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_PRINTER_H_
