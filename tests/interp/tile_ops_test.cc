// Tile ops and element-wise loops on the interpreter: each reduction kind,
// cumsum both ways, Parallel loops on floats and integers, fill, the
// boundary rule, Print, and the row softmax / cumsum seed program.
#include <cmath>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/interp/interpreter.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"
#include "tests/interp/interp_programs.h"
#include "tests/interp/test_util.h"

namespace tessel {
namespace {

namespace T = tessel;
using interp_test::ExpectClose;
using interp_test::IntegerTensor;
using interp_test::RandomTensor;
using interp_test::ReduceFn;

constexpr int R = interp_test::kTileRows, N = interp_test::kTileCols;

struct ReduceCase {
  const char* name;
  ReduceFn fn;
  double (*combine)(double, double);
  double (*map)(double);
};

double Id(double x) { return x; }
double Abs(double x) { return std::fabs(x); }
double Add(double a, double b) { return a + b; }
double Max(double a, double b) { return std::max(a, b); }
double Min(double a, double b) { return std::min(a, b); }

TEST(ReduceTest, EachKindBothDimsWithAndWithoutClear) {
  const ReduceCase cases[] = {
      {"sum", &T::reduce_sum, Add, Id},
      {"max", &T::reduce_max, Max, Id},
      {"min", &T::reduce_min, Min, Id},
      {"abssum", &T::reduce_abssum, Add, Abs},
      {"absmax", &T::reduce_absmax, Max, Abs},
  };
  HostTensor x = RandomTensor(f32, {R, N}, 41, -2, 2);
  for (const ReduceCase& c : cases) {
    for (bool clear : {true, false}) {
      SCOPED_TRACE(testing::Message() << c.name << " clear=" << clear);
      absl::StatusOr<Program> prog = interp_test::ReduceProgram(c.fn, clear);
      ASSERT_TRUE(prog.ok()) << prog.status();
      HostTensor y(f32, {R}), z(f32, {N});
      absl::Status s = interpret(*prog, {&x, &y, &z});
      ASSERT_TRUE(s.ok()) << s;
      std::vector<double> want_y(R), want_z(N);
      for (int r = 0; r < R; ++r) {
        double acc = c.map(x.at({r, 0}));
        for (int k = 1; k < N; ++k) acc = c.combine(acc, c.map(x.at({r, k})));
        want_y[r] = clear ? acc : c.combine(0.5, acc);
      }
      for (int k = 0; k < N; ++k) {
        double acc = c.map(x.at({0, k}));
        for (int r = 1; r < R; ++r) acc = c.combine(acc, c.map(x.at({r, k})));
        want_z[k] = clear ? acc : c.combine(0.5, acc);
      }
      ExpectClose(y, want_y, 1e-6, 1e-6);  // sums: f32 accumulation
      ExpectClose(z, want_z, 1e-6, 1e-6);
    }
  }
}

TEST(ReduceTest, SumAccumulatesInTheDestinationDtype) {
  // 2^24 + 1 + 1 in f32 steps stays 2^24; float64 would give 2^24 + 2.
  absl::StatusOr<Program> prog = interp_test::F32SumProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  absl::StatusOr<HostTensor> x = HostTensor::FromDoubles(
      f32, {1, 3}, std::vector<double>{16777216.0, 1.0, 1.0});
  ASSERT_TRUE(x.ok());
  HostTensor y(f32, {1});
  ASSERT_TRUE(interpret(*prog, {&*x, &y}).ok());
  EXPECT_EQ(y.at({0}), 16777216.0);
}

// Integer max / min start from the ends of the dtype's own range: i8 rows
// of negatives, u32 values past 2^31 and i64 values past 2^31 (each once
// gave the identity of i32's range back instead).
TEST(ReduceTest, IntegerMaxMinStartFromTheDtypesRange) {
  struct Case {
    DataType dtype;
    std::vector<double> values;  // one row
    double max, min;
  };
  const Case cases[] = {
      {i8, {-5, -100, -7}, -5, -100},
      {u32, {3000000000.0, 4000000000.0}, 4000000000.0, 3000000000.0},
      {i64, {5000000000.0, 6000000000.0}, 6000000000.0, 5000000000.0},
      {i64, {-5000000000.0, -6000000000.0}, -5000000000.0, -6000000000.0},
      {u8, {7, 3}, 7, 3},
  };
  for (const Case& c : cases) {
    const int n = static_cast<int>(c.values.size());
    for (bool take_max : {true, false}) {
      SCOPED_TRACE(testing::Message()
                   << dtype_name(c.dtype) << (take_max ? " max" : " min"));
      absl::StatusOr<Program> prog =
          interp_test::IntegerReduceProgram(c.dtype, n, take_max);
      ASSERT_TRUE(prog.ok()) << prog.status();
      absl::StatusOr<HostTensor> x =
          HostTensor::FromDoubles(c.dtype, {1, n}, c.values);
      ASSERT_TRUE(x.ok()) << x.status();
      HostTensor y(c.dtype, {1});
      ASSERT_TRUE(interpret(*prog, {&*x, &y}).ok());
      EXPECT_EQ(y.at({0}), take_max ? c.max : c.min);
      // The GPU lowering takes the same identity; it must compile.
      absl::StatusOr<CompiledKernel> k =
          compile(*prog, {.target = Target::sm90a()});
      EXPECT_TRUE(k.ok()) << k.status();
    }
  }
}

TEST(CumsumTest, BothDimsBothDirectionsInPlaceOrNot) {
  HostTensor x = RandomTensor(f32, {R, N}, 43);
  for (int dim : {0, 1}) {
    for (bool reverse : {false, true}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(testing::Message() << "dim=" << dim << " reverse="
                                        << reverse << " in_place=" << in_place);
        absl::StatusOr<Program> prog =
            interp_test::CumsumProgram(dim, reverse, in_place);
        ASSERT_TRUE(prog.ok()) << prog.status();
        HostTensor y(f32, {R, N});
        absl::Status s = interpret(*prog, {&x, &y});
        ASSERT_TRUE(s.ok()) << s;
        std::vector<double> want(R * N);
        for (int r = 0; r < R; ++r) {
          for (int c = 0; c < N; ++c) {
            double acc = 0;
            const int i = dim == 0 ? r : c;
            const int len = dim == 0 ? R : N;
            for (int j = 0; j < len; ++j) {
              if (reverse ? j < i : j > i) continue;
              acc += dim == 0 ? x.at({j, c}) : x.at({r, j});
            }
            want[r * N + c] = acc;
          }
        }
        ExpectClose(y, want, 1e-6, 1e-6);
      }
    }
  }
}

TEST(ElementwiseTest, ParallelLoopOnFloats) {
  absl::StatusOr<Program> prog = interp_test::FloatElementwiseProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  const int m = 40;  // ragged: the last block's rows 40..47 are past the edge
  HostTensor x = RandomTensor(f32, {m, 32}, 44, -3, 3);
  HostTensor y(f32, {m, 32});
  ASSERT_TRUE(interpret(*prog, {&x, &y}).ok());
  std::vector<double> want(m * 32);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < 32; ++c) {
      const double v = x.at({r, c});
      want[r * 32 + c] =
          v > 0 ? std::exp2(v) * 2 : std::sqrt(std::fabs(v)) - ((r % 16) + c);
    }
  }
  ExpectClose(y, want, 2e-7, 1e-6);
}

TEST(ElementwiseTest, IntegerFloorDivisionModuloAndBitOps) {
  absl::StatusOr<Program> prog = interp_test::IntegerOpsProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor x = IntegerTensor(i32, {64}, 45, -40, 40);
  HostTensor y(i32, {4, 64});
  ASSERT_TRUE(interpret(*prog, {&x, &y}).ok());
  for (int i = 0; i < 64; ++i) {
    const int64_t v = x.get_flat_int(i);
    const int64_t q = v >= 0 ? v / 3 : -((-v + 2) / 3);
    EXPECT_EQ(y.get_flat_int(i), q) << v;
    EXPECT_EQ(y.get_flat_int(64 + i), v - 3 * q) << v;
    EXPECT_EQ(y.get_flat_int(128 + i), (v & 6) ^ (v * 4)) << v;
    EXPECT_EQ(y.get_flat_int(192 + i),
              std::max<int64_t>(v, -5) * std::min<int64_t>(v, 7))
        << v;
  }
}

TEST(BoundaryRuleTest, ReadsPastTheEdgeAreZeroAndStoresAreSkipped) {
  absl::StatusOr<Program> prog = interp_test::BoundaryProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor x = IntegerTensor(f32, {10}, 46, 1, 9);
  HostTensor y(f32, {10}), s(f32, {1});
  absl::Status st = interpret(*prog, {&x, &y, &s});
  ASSERT_TRUE(st.ok()) << st;
  double want = 0;
  for (int i = 4; i < 10; ++i) want += x.at({i});
  EXPECT_EQ(s.at({0}), want);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y.at({i}), 3.0) << i;
}

TEST(PrintTest, WritesValuesAndBuffersWithTheBlock) {
  absl::StatusOr<Program> prog = interp_test::PrintProgram();
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor x(f32, {2});
  std::ostringstream out;
  ASSERT_TRUE(interpret(*prog, {&x}, {.print = &out}).ok());
  EXPECT_EQ(out.str(),
            "[block 0] bx: 0\n[block 0] tile: t[2] = 1.5 1.5\n"
            "[block 1] bx: 10\n[block 1] tile: t[2] = 1.5 1.5\n");
}

TEST(SeedTest, RowSoftmaxAndCumsum) {
  const int M = 70, Ncols = 48;  // ragged: 70 rows in blocks of 32
  absl::StatusOr<Program> prog = seed::RowSoftmaxCumsum(M, Ncols);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor x = RandomTensor(f32, {M, Ncols}, 47, -4, 4);
  HostTensor y(f32, {M, Ncols}), z(f32, {M, Ncols});
  absl::Status s = interpret(*prog, {&x, &y, &z});
  ASSERT_TRUE(s.ok()) << s;
  std::vector<double> want_y(M * Ncols), want_z(M * Ncols);
  for (int r = 0; r < M; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < Ncols; ++c) mx = std::max(mx, x.at({r, c}));
    for (int c = 0; c < Ncols; ++c) sum += std::exp(x.at({r, c}) - mx);
    double run = 0;
    for (int c = 0; c < Ncols; ++c) {
      want_y[r * Ncols + c] = std::exp(x.at({r, c}) - mx) / sum;
      run += want_y[r * Ncols + c];
      want_z[r * Ncols + c] = run;
    }
  }
  ExpectClose(y, want_y, 1e-5, 1e-7);
  ExpectClose(z, want_z, 1e-5, 1e-6);
}

}  // namespace
}  // namespace tessel
