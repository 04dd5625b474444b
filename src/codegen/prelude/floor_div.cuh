// tessel device prelude: integer floor division and modulo, as the tile IR
// defines them (rounding toward negative infinity; the modulo takes the
// divisor's sign). The codegen uses them where C++'s truncating / and %
// could differ: a possibly negative dividend or a non-constant divisor.
//
//   int q = tessel::dev::floordiv(-7, 2);  // -4 (C++: -3)
//   int r = tessel::dev::floormod(-7, 2);  //  1 (C++: -1)
#pragma once

namespace tessel {
namespace dev {

__device__ __forceinline__ int floordiv(int a, int b) {
  const int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int floormod(int a, int b) {
  const int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ long long floordiv(long long a, long long b) {
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long floormod(long long a, long long b) {
  const long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace dev
}  // namespace tessel
