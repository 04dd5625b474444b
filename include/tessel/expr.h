// Scalar expressions of a tile kernel: constants, indices, element values.
//
//   namespace T = tessel;
//   T::Expr n = T::ceildiv(K, 32);               // folded when K is a number
//   acc(i, j) = T::exp2(acc(i, j) * scale - m(i));  // inside a Parallel loop
//   T::Expr keep = T::select(i >= j, x, 0);
//
// Arithmetic on T::Expr records expression nodes; nothing is computed here.
// C++ integers become i32 constants (i64 when they do not fit), floating
// literals f32 constants; a constant adapts to the dtype of the other operand
// (x_f16 * 2 is f16), otherwise float beats int and the wider type wins.
// Integer / and % round toward minus infinity (Python's // and %).
// A mistake (a bit operation on floats, exp of an int) is reported by
// ProgramBuilder::finish() at the next recorded op's source line.
#ifndef TESSEL_EXPR_H_
#define TESSEL_EXPR_H_

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "tessel/dtype.h"

namespace tessel {

namespace ir {
class ExprNode;
}  // namespace ir
namespace dsl {
struct Access;
}  // namespace dsl

class Expr {
 public:
  Expr() = default;  // undefined
  template <std::integral I>
  Expr(I value)  // NOLINT: literals convert implicitly
      : Expr(std::is_same_v<I, bool> ? FromBool(value != 0)
                                     : FromInt(static_cast<int64_t>(value))) {}
  template <std::floating_point F>
  Expr(F value)  // NOLINT
      : Expr(FromFloat(static_cast<double>(value))) {}

  bool defined() const { return node_ != nullptr; }
  DataType dtype() const;
  std::string to_string() const;

 private:
  friend struct dsl::Access;
  static Expr FromInt(int64_t value);
  static Expr FromBool(bool value);
  static Expr FromFloat(double value);
  std::shared_ptr<const ir::ExprNode> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);
Expr operator&&(const Expr& a, const Expr& b);
Expr operator||(const Expr& a, const Expr& b);
Expr operator&(const Expr& a, const Expr& b);
Expr operator|(const Expr& a, const Expr& b);
Expr operator^(const Expr& a, const Expr& b);
Expr operator<<(const Expr& a, const Expr& b);
Expr operator>>(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator!(const Expr& a);
Expr operator~(const Expr& a);
// Rebinds the C++ variable to a new expression (records nothing).
inline Expr& operator+=(Expr& a, const Expr& b) { return a = a + b; }
inline Expr& operator-=(Expr& a, const Expr& b) { return a = a - b; }
inline Expr& operator*=(Expr& a, const Expr& b) { return a = a * b; }
inline Expr& operator/=(Expr& a, const Expr& b) { return a = a / b; }

Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr ceildiv(const Expr& a, const Expr& b);  // integers: ceil(a / b)
Expr pow(const Expr& a, const Expr& b);
Expr select(const Expr& cond, const Expr& true_value, const Expr& false_value);
inline Expr if_then_else(const Expr& c, const Expr& t, const Expr& f) {
  return select(c, t, f);
}
Expr cast(const Expr& value, DataType dtype);

Expr exp(const Expr& x);
Expr exp2(const Expr& x);
Expr log(const Expr& x);
Expr log2(const Expr& x);
Expr sqrt(const Expr& x);
Expr rsqrt(const Expr& x);
Expr abs(const Expr& x);
Expr tanh(const Expr& x);
Expr sigmoid(const Expr& x);
Expr sin(const Expr& x);
Expr cos(const Expr& x);
Expr floor(const Expr& x);
Expr ceil(const Expr& x);
Expr round(const Expr& x);
Expr erf(const Expr& x);

// Typed constants: T::constant(0.5, T::f16), T::infinity(T::f32) (negate
// for -inf), the largest / smallest finite value of a type.
Expr constant(double value, DataType dtype);
Expr infinity(DataType dtype);
Expr max_value(DataType dtype);
Expr min_value(DataType dtype);

}  // namespace tessel

#endif  // TESSEL_EXPR_H_
