// Structural hashing and equality of programs, for memoizing compiles.
//
//   uint64_t h = ir::StructuralHash(program);
//   if (ir::StructuralEqual(a, b)) { ... reuse a's compiled kernel for b ... }
//
// Two programs are equal when they have the same name, tensor parameters
// (names, dtypes, shapes) and statements, with variables and local buffers
// matched by where they are bound (loop order, allocation order), not by
// name. Source locations never count. Equal programs hash equal; the hash is
// 64-bit XXH3 over a canonical token stream, so collisions are rare but
// possible: confirm with StructuralEqual.
#ifndef TESSEL_SRC_IR_STRUCTURAL_H_
#define TESSEL_SRC_IR_STRUCTURAL_H_

#include <cstdint>
#include <string>

#include "src/ir/program.h"

namespace tessel::ir {

uint64_t StructuralHash(const Program& program);
// 32 hex digits of XXH3-128 over the same tokens: a name for the program
// that holds across processes (the program index, src/runtime/
// program_index.h), as strong as the disk cache's source keys.
std::string StructuralKey(const Program& program);
bool StructuralEqual(const Program& a, const Program& b);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_STRUCTURAL_H_
