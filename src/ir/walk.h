// Whole-tree questions every layer above the IR asks: visit every
// statement, does a tree mention a variable or a buffer, does it read memory.
//
//   ir::ForEachStmt(body, [&](const ir::Stmt& s) { ... });   // pre-order
//   if (ir::UsesVar(index, k.get())) ...
#ifndef TESSEL_SRC_IR_WALK_H_
#define TESSEL_SRC_IR_WALK_H_

#include <functional>

#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/stmt.h"

namespace tessel::ir {

// Walks every statement (pre-order).
void ForEachStmt(const Stmt& s, const std::function<void(const Stmt&)>& fn);

// Whether e (or s) mentions the variable.
bool UsesVar(const Expr& e, const VarNode* var);
bool UsesVar(const Stmt& s, const VarNode* var);
// Whether the statement names the buffer anywhere.
bool UsesBuffer(const Stmt& s, const BufferNode* buffer);

// Whether e loads from a buffer or calls out (its value may change while
// the tree stays the same).
bool ReadsMemory(const Expr& e);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_WALK_H_
