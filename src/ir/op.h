// Building expressions: constants, type promotion and the type rules
// (CheckBinary, ...). Every constructor folds and simplifies through
// src/ir/arith/simplify.h.
//
//   using namespace tessel::ir;
//   Var k("k");
//   Expr start = k * 32 + 0;              // -> k * 32
//   Expr n = CeilDiv(Expr(1000), 128);     // -> 8
//   std::optional<int64_t> d = ConstDifference((k + 1) * 32, k * 32);  // 32
//
// Every constructor here returns a well-typed node; operands of different
// dtypes are promoted first (PromoteTypes). Callers that take user input
// check it with CheckBinary / CheckUnary / CheckMath before building, so the
// internal checks here only fire on our own bugs.
#ifndef TESSEL_SRC_IR_OP_H_
#define TESSEL_SRC_IR_OP_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "src/ir/arith/equal.h"   // ExprDeepEqual, for op.h's users
#include "src/ir/arith/linear.h"  // ConstDifference, likewise
#include "src/ir/expr.h"

namespace tessel::ir {

Expr IntImm(DataType dtype, int64_t value);  // wraps value to the width
Expr FloatImm(DataType dtype, double value);
Expr BoolImm(bool value);
// A constant of any dtype (ints truncate `value`).
Expr MakeConst(DataType dtype, double value);
Expr Zero(DataType dtype);
Expr One(DataType dtype);

// The dtype both operands of a binary op are converted to. A constant operand
// adapts to the other side (x_f16 * 2 stays f16); otherwise float beats int
// and the wider type wins; f16 with bf16 gives f32.
DataType PromoteTypes(const Expr& a, const Expr& b);

// Whether op may combine a and b (after promotion), e.g. no bit ops on
// floats, no && on ints. The message names the op and both dtypes.
absl::Status CheckBinary(BinaryOp op, const Expr& a, const Expr& b);
absl::Status CheckUnary(UnaryOp op, const Expr& a);
absl::Status CheckMath(MathOp op, const Expr& a);

Expr Binary(BinaryOp op, Expr a, Expr b);
Expr Unary(UnaryOp op, Expr a);
Expr Select(Expr cond, Expr true_value, Expr false_value);
Expr Cast(DataType dtype, Expr value);
Expr Math(MathOp op, Expr a);
Expr Call(DataType dtype, std::string name, std::vector<Expr> args);
Expr Load(const Buffer& buffer, std::vector<Expr> indices);

inline Expr Min(Expr a, Expr b) { return Binary(BinaryOp::kMin, a, b); }
inline Expr Max(Expr a, Expr b) { return Binary(BinaryOp::kMax, a, b); }
inline Expr CeilDiv(Expr a, Expr b) { return Binary(BinaryOp::kCeilDiv, a, b); }

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator!(Expr a);

// Constant queries.
std::optional<int64_t> AsConstInt(const Expr& e);   // IntImm only
std::optional<double> AsConstFloat(const Expr& e);  // IntImm or FloatImm
bool IsConstInt(const Expr& e, int64_t value);

// Integer floor division / modulo as the IR defines them (b != 0).
int64_t FloorDiv(int64_t a, int64_t b);
int64_t FloorMod(int64_t a, int64_t b);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_OP_H_
