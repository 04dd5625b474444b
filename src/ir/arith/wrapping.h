// Two's-complement int64 arithmetic: what the IR's integer constants do on
// overflow (the folding must not be undefined behaviour where the GPU wraps).
#ifndef TESSEL_SRC_IR_ARITH_WRAPPING_H_
#define TESSEL_SRC_IR_ARITH_WRAPPING_H_

#include <cstdint>

namespace tessel::ir::arith {

inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t WrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

}  // namespace tessel::ir::arith

#endif  // TESSEL_SRC_IR_ARITH_WRAPPING_H_
