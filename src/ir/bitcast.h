// T::bitcast: a value's bits read as another dtype of the same width
// (f32 <-> i32 / u32, f16 / bf16 <-> i16). The IR carries it as the
// expression intrinsic Call(to, "bitcast", {value}), which the printer,
// parser and hash already know; the interpreter and both code generators
// spell it (CUDA: __float_as_int and kin; PTX: mov.b32 / mov.b16).
//
//   if (auto why = ir::BitcastRefusal(f32, f16)) ...  // "16 bits, not 32"
//   ir::Expr bits = ir::MakeBitcast(x, DataType::kI32);
#ifndef TESSEL_SRC_IR_BITCAST_H_
#define TESSEL_SRC_IR_BITCAST_H_

#include <optional>
#include <string>

#include "src/ir/expr.h"

namespace tessel::ir {

inline constexpr char kBitcastName[] = "bitcast";

// Why `from` cannot be reinterpreted as `to`, or nullopt when it can.
std::optional<std::string> BitcastRefusal(DataType from, DataType to);

Expr MakeBitcast(Expr value, DataType to);

// The reinterpreted value, when e is a bitcast; else nullptr.
const Expr* AsBitcast(const Expr& e);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_BITCAST_H_
