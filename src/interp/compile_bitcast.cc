// T::bitcast in the interpreter: the value's bits in its dtype (f32 / f16 /
// bf16 encoded as the GPU stores them, integers two's complement), decoded
// as the target dtype. A NaN is canonical here (the GPU keeps its payload).
#include <cstdint>

#include "src/interp/compiler.h"
#include "src/interp/numeric.h"
#include "src/interp/status_macros.h"

namespace tessel::interp {
namespace {

// The low `bits` of v (its two's complement), as the unsigned pattern.
uint64_t Pattern(DataType from, int64_t v) {
  const int bits = dtype_bits(from);
  return bits >= 64 ? static_cast<uint64_t>(v)
                    : static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
}

}  // namespace

absl::StatusOr<IntFn> Compiler::IntBitcast(const ir::Expr& value, DataType to) {
  const DataType from = value.dtype();
  if (is_float(from)) {
    INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(value));
    return IntFn([from, to, a](Frame& f) {
      return WrapInt(to, static_cast<int64_t>(EncodeFloat(from, a(f))));
    });
  }
  INTERP_ASSIGN_OR_RETURN(IntFn a, Int(value));
  return IntFn([to, a](Frame& f) { return WrapInt(to, a(f)); });
}

absl::StatusOr<FloatFn> Compiler::FloatBitcast(const ir::Expr& value,
                                               DataType to) {
  const DataType from = value.dtype();
  if (is_float(from)) {
    INTERP_ASSIGN_OR_RETURN(FloatFn a, Float(value));
    return FloatFn([from, to, a](Frame& f) {
      return DecodeFloat(to, EncodeFloat(from, a(f)));
    });
  }
  INTERP_ASSIGN_OR_RETURN(IntFn a, Int(value));
  return FloatFn(
      [from, to, a](Frame& f) { return DecodeFloat(to, Pattern(from, a(f))); });
}

}  // namespace tessel::interp
