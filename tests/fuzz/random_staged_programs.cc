#include "tests/fuzz/random_staged_programs.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/tessel.h"
#include "tests/fuzz/random_case_parts.h"

namespace tessel::fuzz {
namespace {

namespace T = tessel;
using seed_test::SeedCase;

enum class Route { kFragment, kShared, kSharedThenFragment };

// Everything one case draws; the program and its description follow from it.
struct Staged {
  DataType in, out;
  int bm, bn, threads;
  int64_t batch;  // 0: 2-D tensors
  int64_t M, N;
  bool symbolic;
  Route route;
  bool transpose, shared_out;
  std::vector<int> math;  // steps of Math(), in order
  bool bias, indices, scalar;
  int atomic;  // 0 none, 1 add every element into R[row], 2 max
};

// One step of the element's math, on f32 values of order 1.
T::Expr Math(int step, const T::Expr& v) {
  switch (step) {
    case 0:
      return v * 0.5f + 0.25f;
    case 1:
      return T::max(v, 0.0f);
    case 2:
      return T::select(v > 0.125f, v, v * 0.25f);
    case 3:
      return T::tanh(v);
    case 4:
      return T::sigmoid(v);
    case 5:
      return T::exp2(T::min(v, 1.0f));
    default:
      return T::sqrt(T::abs(v) + 1.0f);
  }
}
constexpr int kMathSteps = 7;

Staged Draw(Dice& d) {
  Staged s;
  s.in = d.OneOf({T::f32, T::f16, T::bf16});
  s.out = d.Chance(50) ? s.in : d.OneOf({T::f32, T::f16, T::bf16});
  s.bn = d.OneOf({8, 16, 32, 64, 128});
  s.threads = d.OneOf({32, 64, 128, 256});
  // At most 32 elements a thread: tessel caps fragments at 4 KB a thread.
  s.bm = std::min(d.OneOf({1, 2, 4, 8, 16, 32, 64, 128}),
                  std::max(1, 32 * s.threads / s.bn));
  s.batch = d.Chance(30) ? 1 + d.Pick(3) : 0;
  // Ragged, but no smaller than the tile: a start point lays the tile on
  // the tensor's trailing dims, and refuses one wider than them.
  s.N = std::max<int64_t>(d.Size(300, s.bn), s.bn);
  s.M = std::max<int64_t>(d.Size(300, s.bm), s.bm);
  s.symbolic = d.Chance(33);
  s.route = static_cast<Route>(d.Pick(3));
  s.transpose = d.Chance(35);
  // A fragment read transposed is read by threads that do not hold it:
  // every thread holds it all (4 KB a thread at most), so only small tiles
  // transpose from registers; the rest from shared memory, as users do.
  if (s.transpose && s.route != Route::kShared && s.bm * s.bn > 512) {
    s.route = Route::kShared;
  }
  s.shared_out = d.Chance(40);
  for (int i = 0, n = 1 + d.Pick(2); i < n; ++i) {
    s.math.push_back(d.Pick(kMathSteps));
  }
  s.bias = d.Chance(40);
  s.indices = d.Chance(30);
  s.scalar = d.Chance(25);
  s.atomic = d.Chance(30) ? 1 + d.Pick(2) : 0;
  return s;
}

std::string Describe(const Staged& s) {
  std::string math;
  for (int m : s.math) absl::StrAppend(&math, m);
  return absl::StrCat(
      "staged ", s.batch > 0 ? absl::StrCat(s.batch, "x") : "", s.M, "x", s.N,
      " ", std::string(dtype_name(s.in)), "->", std::string(dtype_name(s.out)),
      " tile ", s.bm, "x", s.bn, " threads ", s.threads,
      s.symbolic ? " symbolic" : "", " route ", static_cast<int>(s.route),
      s.transpose ? " transposed" : "", s.shared_out ? " via shared" : "",
      " math ", math, s.bias ? " bias" : "", s.indices ? " indices" : "",
      s.scalar ? " scalar" : "",
      s.atomic == 1   ? " atomic add"
      : s.atomic == 2 ? " atomic max"
                      : "");
}

// The kernel's body for block (bx, by[, bz]).
void Body(const Staged& s, const T::Buffer& X, const T::Buffer& Y,
          const std::optional<T::Buffer>& Bias,
          const std::optional<T::Buffer>& R, const T::Expr& Me,
          const T::Expr& Ne, const T::Expr& bx, const T::Expr& by,
          const std::optional<T::Expr>& bz) {
  const T::Expr row0 = by * s.bm, col0 = bx * s.bn;
  auto region = [&](const T::Buffer& t, T::Expr a, T::Expr b) {
    return bz ? t(*bz, a, b) : t(a, b);
  };
  // Stage the tile of X.
  T::Buffer x;
  if (s.route == Route::kFragment) {
    x = T::alloc_fragment({s.bm, s.bn}, s.in, "x");
    T::copy(region(X, row0, col0), x);
  } else {
    auto xs = T::alloc_shared({s.bm, s.bn}, s.in, "xs");
    T::copy(region(X, row0, col0), xs);
    x = xs;
    if (s.route == Route::kSharedThenFragment) {
      x = T::alloc_fragment({s.bm, s.bn}, s.in, "x");
      T::copy(xs, x);
    }
  }
  std::optional<T::Buffer> bias;
  if (s.bias) {
    bias = T::alloc_fragment({s.bn}, T::f32, "bias");
    T::copy((*Bias)(col0), *bias);
  }
  std::optional<T::ScalarVar> scale;
  if (s.scalar) {
    scale = T::alloc_var(T::f32, "scale");
    *scale = 0.75f;
  }
  auto value = [&](const T::Expr& i, const T::Expr& j) {
    T::Expr v = T::cast(x(i, j), T::f32);
    for (int m : s.math) v = Math(m, v);
    if (bias) v = v + (*bias)(j);
    if (s.indices) {
      v = v + T::cast(((row0 + i) * 3 + col0 + j) % 7, T::f32) * 0.125f;
    }
    if (scale) v = v * T::Expr(*scale);
    return v;
  };
  // Write it out, as it is or transposed.
  if (s.transpose) {
    auto y = s.shared_out ? T::alloc_shared({s.bn, s.bm}, s.out, "yt")
                          : T::alloc_fragment({s.bn, s.bm}, s.out, "yt");
    for (auto [j, i] : T::Parallel(s.bn, s.bm))
      y(j, i) = T::cast(value(i, j), s.out);
    T::copy(y, region(Y, col0, row0));
  } else {
    auto y = s.shared_out ? T::alloc_shared({s.bm, s.bn}, s.out, "y")
                          : T::alloc_fragment({s.bm, s.bn}, s.out, "y");
    for (auto [i, j] : T::Parallel(s.bm, s.bn))
      y(i, j) = T::cast(value(i, j), s.out);
    T::copy(y, region(Y, row0, col0));
  }
  // Every element of a row into R[row]; the tile's elements past M or N
  // are not the tensors' (an element atomic is not clipped: it must not
  // reach past R).
  if (s.atomic > 0) {
    for (auto [i, j] : T::Parallel(s.bm, s.bn)) {
      T::If(col0 + j < Ne && row0 + i < Me, [&] {
        if (s.atomic == 1) {
          T::atomic_add((*R)(row0 + i), value(i, j));
        } else {
          T::atomic_max((*R)(row0 + i), value(i, j));
        }
      });
    }
  }
}

SeedCase StagedCase(Dice& d, const std::string& name) {
  const Staged s = Draw(d);
  auto shape = [&](int64_t a, int64_t b) {
    return s.batch > 0 ? std::vector<int64_t>{s.batch, a, b}
                       : std::vector<int64_t>{a, b};
  };
  SeedCase c;
  c.name = name;
  c.description = Describe(s);
  c.arguments = {In("X", s.in, shape(s.M, s.N))};
  if (s.bias) c.arguments.push_back(In("Bias", T::f32, {s.N}));
  c.arguments.push_back(
      Out("Y", s.out, s.transpose ? shape(s.N, s.M) : shape(s.M, s.N)));
  if (s.atomic > 0) c.arguments.push_back(Acc("R", T::f32, {s.M}));
  // tanh, sigmoid and exp2 differ from the interpreter's by a few ulps;
  // the atomic sums add up to 300 elements in any order.
  c.rtol = std::max(Rtol(s.out), 4e-4);
  c.atol = Atol(s.out) * (s.atomic == 1 ? 8 : 1);
  c.make = [s]() -> absl::StatusOr<Program> {
    T::ProgramBuilder p("random_staged");
    const T::Expr Me = s.symbolic ? p.dim("M") : T::Expr(s.M);
    const T::Expr Ne = s.symbolic ? p.dim("N") : T::Expr(s.N);
    auto dims = [&](T::Expr a, T::Expr b) {
      return s.batch > 0 ? std::vector<T::Expr>{T::Expr(s.batch), a, b}
                         : std::vector<T::Expr>{a, b};
    };
    auto X = p.tensor("X", dims(Me, Ne), s.in);
    std::optional<T::Buffer> Bias, R;
    if (s.bias) Bias = p.tensor("Bias", {Ne}, T::f32);
    auto Y = p.tensor("Y", s.transpose ? dims(Ne, Me) : dims(Me, Ne), s.out);
    if (s.atomic > 0) R = p.tensor("R", {Me}, T::f32);
    const T::Expr gx = T::ceildiv(Ne, s.bn), gy = T::ceildiv(Me, s.bm);
    if (s.batch > 0) {
      T::Kernel kernel(gx, gy, T::Expr(s.batch), {.threads = s.threads});
      auto [bx, by, bz] = kernel.block_index();
      Body(s, X, Y, Bias, R, Me, Ne, bx, by, bz);
    } else {
      T::Kernel kernel(gx, gy, {.threads = s.threads});
      auto [bx, by] = kernel.block_index();
      Body(s, X, Y, Bias, R, Me, Ne, bx, by, std::nullopt);
    }
    return p.finish();
  };
  return c;
}

}  // namespace

std::vector<SeedCase> RandomStagedCases(uint64_t seed, int count) {
  Dice d(seed ^ 0x5747414745ULL);  // not the same draws as the other kinds
  std::vector<SeedCase> cases;
  for (int i = 0; i < count; ++i) {
    cases.push_back(StagedCase(d, absl::StrCat("staged_", seed, "_", i)));
    cases.back().input_seed = seed * 1000 + static_cast<uint64_t>(i) * 16 + 7;
  }
  return cases;
}

}  // namespace tessel::fuzz
