// The programs the interpreter suites run, built in one place so that the
// suites (tests/interp/*_test.cc) check their numerics and
// tests/tools/compiles_for_sm90a_test.cc checks that the GPU lowering
// accepts every one of them (a program the CPU target runs must compile for
// sm_90a).
//
//   absl::StatusOr<Program> p = interp_test::CumsumProgram(1, true, false);
//   for (const NamedProgram& n : InterpPrograms()) { ... n.make() ... }
//
// Link target: tessel_interp_programs (tests/interp/CMakeLists.txt).
#ifndef TESSEL_TESTS_INTERP_INTERP_PROGRAMS_H_
#define TESSEL_TESTS_INTERP_INTERP_PROGRAMS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::interp_test {

// The tile shape of the reduce and cumsum programs.
inline constexpr int kTileRows = 8, kTileCols = 24;

using ReduceFn = void (*)(const Buffer&, const Buffer&, ReduceOptions,
                          SourceLocation);

// Y[r] = reduce over c of X[r, c] (dim 1), Z[c] = reduce over r (dim 0); with
// clear = false both combine with a starting 0.5. X [8, 24], Y [8], Z [24].
absl::StatusOr<Program> ReduceProgram(ReduceFn reduce, bool clear);

// Y[0] = max (or min) of the n values of X [1, n], both of dtype.
absl::StatusOr<Program> IntegerReduceProgram(DataType dtype, int n,
                                             bool take_max);

// 2^24 + 1 + 1 summed in f32: X [1, 3] -> Y [1].
absl::StatusOr<Program> F32SumProgram();

// Y = cumsum of X [8, 24] along dim, through a shared tile.
absl::StatusOr<Program> CumsumProgram(int dim, bool reverse, bool in_place);

// Y[M, 32] = a select of exp2 / sqrt / abs of X, 16-row blocks, symbolic M.
absl::StatusOr<Program> FloatElementwiseProgram();

// Y[4, 64] = floor division, floor modulo, bit ops and max/min of X [64] i32.
absl::StatusOr<Program> IntegerOpsProgram();

// Reads past the edge of X [10] (zeros) summed into S [1]; a store into
// Y [10] that starts before the edge and runs past the end.
absl::StatusOr<Program> BoundaryProgram();

// Prints a value and a fragment per block, copies the fragment to X [2].
absl::StatusOr<Program> PrintProgram();

// X [n] f32 -> fragment -> shared of dtype (rounds) -> Y [n] of dtype.
absl::StatusOr<Program> RoundingCopyProgram(DataType dtype, int n);

// Y [4] f16 = (X + 1) + 1, each add rounded to f16.
absl::StatusOr<Program> F16ArithmeticProgram();

// C [16, 16] of acc = A * B [16, 16] of in, one gemm from shared tiles.
absl::StatusOr<Program> TinyGemmProgram(DataType in, DataType acc);

// Y [1] = X[0] * X[1] + 1, f64, without any tile.
absl::StatusOr<Program> F64ScalarProgram();

struct NamedProgram {
  std::string name;  // a gtest parameter name: letters, digits, '_'
  std::function<absl::StatusOr<Program>()> make;
};

// Every program the interpreter suites run to completion, at the sizes they
// run it (seed programs included), but not the ones they build only to see
// the interpreter refuse them (errors_test.cc).
std::vector<NamedProgram> InterpPrograms();

}  // namespace tessel::interp_test

#endif  // TESSEL_TESTS_INTERP_INTERP_PROGRAMS_H_
