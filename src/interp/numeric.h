// Element storage of every dtype, bit-exact with how the GPU stores values.
//
//   uint64_t bits = interp::EncodeFloat(f16, 1.0 / 3.0);     // 0x3555
//   double v = interp::RoundToDtype(bf16, 3.14159);           // 3.140625
//   interp::StoreElement(f16, ptr, x);  double y = interp::LoadElement(f16,
//   ptr);
//
// Conversions to narrow floats round to nearest, ties to even (cvt.rn).
// f16 and bf16 overflow to infinity; the fp8 kinds saturate to the largest
// finite value (cvt.rn.satfinite, what __nv_fp8_e4m3 / __nv_fp8_e5m2 do);
// NaN becomes the canonical NaN (0x7fff for f16/bf16, 0x7f for fp8).
// Float to integer truncates toward zero and saturates (NaN gives 0), as
// cvt.rzi does; integer arithmetic wraps to the width.
#ifndef TESSEL_SRC_INTERP_NUMERIC_H_
#define TESSEL_SRC_INTERP_NUMERIC_H_

#include <cstddef>
#include <cstdint>

#include "src/ir/int_conversion.h"
#include "src/ir/tile_op_rules.h"
#include "tessel/dtype.h"

namespace tessel::interp {

// Storage bits of v (a float dtype) in the low dtype_bits(t) bits.
uint64_t EncodeFloat(DataType t, double v);
// The value that the storage bits of a float dtype stand for.
double DecodeFloat(DataType t, uint64_t bits);
// The value of float dtype t nearest to v (what storing v and reading it back
// gives). f64: v itself.
double RoundToDtype(DataType t, double v);

// Integer wrapping and float to integer conversion: one definition with the
// constant folder's (src/ir/int_conversion.h).
using ir::FloatToInt;
using ir::WrapInt;

// Float min and max: IEEE 754-2019 minimumNumber / maximumNumber. A NaN
// operand is ignored (the result is NaN only when both are), -0 < +0, and
// the order does not depend on which operand comes first. T::min / T::max,
// reduce_min / reduce_max and atomic_min / atomic_max all use it, and so
// does the device prelude (prelude/float_minmax.cuh).
using ir::MaxNum;  // src/ir/tile_op_rules.h
using ir::MinNum;

// Reading and writing one element of dtype t at p (dtype_bytes(t) bytes).
double LoadElement(DataType t, const std::byte* p);
int64_t LoadElementInt(DataType t, const std::byte* p);  // integer dtypes, bool
// Rounds (float dtypes) or converts (integer dtypes) v first.
void StoreElement(DataType t, std::byte* p, double v);
void StoreElementInt(DataType t, std::byte* p, int64_t v);

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_NUMERIC_H_
