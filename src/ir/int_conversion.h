// Integer conversions of the IR's dtypes, one definition shared by constant
// folding (op.cc) and the interpreter (src/interp/numeric.h), so that a
// folded constant and a computed value always agree.
//
//   int64_t a = ir::WrapInt(DataType::kI8, 300);         // 44
//   int64_t b = ir::FloatToInt(DataType::kI8, 300.0);    // 127 (saturates)
//   int64_t c = ir::FloatToInt(DataType::kI32, -2.7);    // -2
//
// Integer arithmetic wraps to the width; float to integer truncates toward
// zero and saturates (NaN gives 0), as PTX cvt.rzi does; bool is v != 0.
#ifndef TESSEL_SRC_IR_INT_CONVERSION_H_
#define TESSEL_SRC_IR_INT_CONVERSION_H_

#include <cstdint>

#include "tessel/dtype.h"

namespace tessel::ir {

// An integer (or bool) value wrapped to t's width (bool: v != 0); other
// dtypes keep v.
int64_t WrapInt(DataType t, int64_t v);
// Float to integer dtype t: truncation toward zero, saturating; NaN -> 0.
int64_t FloatToInt(DataType t, double v);

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_INT_CONVERSION_H_
