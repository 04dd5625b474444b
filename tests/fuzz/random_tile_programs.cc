#include "tests/fuzz/random_tile_programs.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessel/tessel.h"
#include "tests/fuzz/random_case_parts.h"

namespace tessel::fuzz {
namespace {

namespace T = tessel;
using seed_test::Argument;
using seed_test::Role;
using seed_test::SeedCase;

// C = epilogue(op(A) op(B)), A and B staged through shared memory over a
// (maybe pipelined) K loop, the accumulator in f32.
SeedCase GemmCase(Dice& d, const std::string& name) {
  // f32 inputs take the CUDA-core FMA path (the tensor-core paths take
  // 16-bit ones), with tiles small enough for its per-thread accumulators.
  const bool fma = d.Chance(20);
  const DataType in = fma ? T::f32 : d.OneOf({T::f16, T::bf16});
  const DataType out = fma ? T::f32 : d.OneOf({T::f32, in});
  const bool ta = d.Chance(30), tb = d.Chance(40);
  const int bm = fma ? d.OneOf({16, 32, 64}) : d.OneOf({64, 128});
  const int bn = fma ? d.OneOf({16, 32, 64}) : d.OneOf({64, 128, 256});
  const int bk = fma ? d.OneOf({8, 16, 32}) : d.OneOf({32, 64});
  const int threads = d.OneOf({128, 256});
  // Stages that fit sm_80's shared memory (163 KB) as well as sm_90a's.
  int stages = d.OneOf({0, 2, 3, 4});
  const int bytes = fma ? 4 : 2;
  while (stages > 2 && (bm + bn) * bk * bytes * stages > 160 * 1024) --stages;
  const int panel = d.Chance(25) ? d.OneOf({2, 4, 8}) : 0;
  const int64_t M = d.Size(320, bm), N = d.Size(320, bn), K = d.Size(320, bk);
  const int epilogue = d.Pick(4);  // none, bias, relu, minus the row max
  SeedCase c;
  c.name = name;
  c.arguments = {
      In("A", in, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}),
      In("B", in,
         tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N})};
  if (epilogue == 1) c.arguments.push_back(In("Bias", T::f32, {N}));
  c.arguments.push_back(Out("C", out, {M, N}));
  c.rtol = Rtol(out);
  c.atol = Atol(out);
  c.description = absl::StrCat(
      "gemm ", M, "x", N, "x", K, " ", std::string(dtype_name(in)), "->",
      std::string(dtype_name(out)), ta ? " A^T" : "", tb ? " B^T" : "",
      " tile ", bm, "x", bn, "x", bk, " threads ", threads, " stages ", stages,
      " panel ", panel, " epilogue ", epilogue);
  c.make = [=]() -> absl::StatusOr<Program> {
    T::ProgramBuilder p("random_gemm");
    auto A = ta ? p.tensor("A", {K, M}, in) : p.tensor("A", {M, K}, in);
    auto B = tb ? p.tensor("B", {N, K}, in) : p.tensor("B", {K, N}, in);
    std::optional<T::Buffer> Bias;
    if (epilogue == 1) Bias = p.tensor("Bias", {N}, T::f32);
    auto C = p.tensor("C", {M, N}, out);
    {
      T::Kernel kernel(T::ceildiv(N, bn), T::ceildiv(M, bm),
                       {.threads = threads});
      auto [bx, by] = kernel.block_index();
      if (panel > 0) T::use_swizzle(panel);
      auto As = ta ? T::alloc_shared({bk, bm}, in, "As")
                   : T::alloc_shared({bm, bk}, in, "As");
      auto Bs = tb ? T::alloc_shared({bn, bk}, in, "Bs")
                   : T::alloc_shared({bk, bn}, in, "Bs");
      auto acc = T::alloc_fragment({bm, bn}, T::f32, "acc");
      T::clear(acc);
      for (auto k : T::Pipelined(T::ceildiv(K, bk), {.num_stages = stages})) {
        if (ta) {
          T::copy(A(k * bk, by * bm), As);
        } else {
          T::copy(A(by * bm, k * bk), As);
        }
        if (tb) {
          T::copy(B(bx * bn, k * bk), Bs);
        } else {
          T::copy(B(k * bk, bx * bn), Bs);
        }
        T::gemm(As, Bs, acc, {.transpose_A = ta, .transpose_B = tb});
      }
      if (epilogue == 1) {
        auto bias = T::alloc_fragment({bn}, T::f32, "bias");
        T::copy((*Bias)(bx * bn), bias);
        for (auto [i, j] : T::Parallel(bm, bn)) acc(i, j) = acc(i, j) + bias(j);
      } else if (epilogue == 2) {
        for (auto [i, j] : T::Parallel(bm, bn))
          acc(i, j) = T::max(acc(i, j), 0.0f);
      } else if (epilogue == 3) {
        auto row_max = T::alloc_fragment({bm}, T::f32, "row_max");
        T::reduce_max(acc, row_max, {.dim = 1});
        for (auto [i, j] : T::Parallel(bm, bn))
          acc(i, j) = acc(i, j) - row_max(i);
      }
      T::copy(acc, C(by * bm, bx * bn));
    }
    return p.finish();
  };
  return c;
}

enum class Reduce { kSum, kMax, kMin, kAbsSum, kAbsMax };

void ReduceRows(Reduce kind, const T::Buffer& x, const T::Buffer& r,
                bool clear) {
  const T::ReduceOptions o{.dim = 1, .clear = clear};
  switch (kind) {
    case Reduce::kSum:
      return T::reduce_sum(x, r, o);
    case Reduce::kMax:
      return T::reduce_max(x, r, o);
    case Reduce::kMin:
      return T::reduce_min(x, r, o);
    case Reduce::kAbsSum:
      return T::reduce_abssum(x, r, o);
    case Reduce::kAbsMax:
      return T::reduce_absmax(x, r, o);
  }
}

// R = reduce(X) over each row, in column chunks; Y = f(X, R) chunk by chunk,
// maybe prefix-summed along the row; maybe S += the column sums (atomics).
SeedCase RowCase(Dice& d, const std::string& name) {
  const DataType dt = d.OneOf({T::f32, T::f16, T::bf16});
  const int bn = d.OneOf({32, 64, 128, 256, 512, 1024});
  int bm = std::min(d.OneOf({1, 2, 4, 8, 16, 32, 64}), 8192 / bn);
  const int threads = d.OneOf({32, 64, 128, 256, 512});
  const int64_t N = d.Size(1100, bn);
  // A [1, bn] tile wider than the rows reads as a tile of the last dim
  // alone (the copy's start-point form; finish() says so): two rows.
  if (bm == 1 && bn > N) bm = 2;
  const int64_t M = d.Size(300, bm);
  const Reduce kind = static_cast<Reduce>(d.Pick(5));
  const int combine = d.Pick(3);  // x - r, x * r, x + r
  const bool cumsum = d.Chance(30), reverse = d.Chance(50);
  const bool column_sums = d.Chance(30);
  const int chunks = static_cast<int>((N + bn - 1) / bn);
  SeedCase c;
  c.name = name;
  c.arguments = {In("X", dt, {M, N}), Out("Y", dt, {M, N}),
                 Out("R", T::f32, {M})};
  if (column_sums) c.arguments.push_back(Acc("S", T::f32, {N}));
  c.rtol = Rtol(dt);
  c.atol = Atol(dt);
  // Prefix sums of up to ~1100 products add their roundings.
  if (cumsum) c.atol *= 4;
  c.description = absl::StrCat(
      "rows ", M, "x", N, " ", std::string(dtype_name(dt)), " tile ", bm, "x",
      bn, " threads ", threads, " reduce ", static_cast<int>(kind), " combine ",
      combine, cumsum ? (reverse ? " cumsum reversed" : " cumsum") : "",
      column_sums ? " column sums" : "");
  c.make = [=]() -> absl::StatusOr<Program> {
    T::ProgramBuilder p("random_rows");
    auto X = p.tensor("X", {M, N}, dt);
    auto Y = p.tensor("Y", {M, N}, dt);
    auto R = p.tensor("R", {M}, T::f32);
    std::optional<T::Buffer> S;
    if (column_sums) S = p.tensor("S", {N}, T::f32);
    {
      T::Kernel kernel(T::ceildiv(M, bm), {.threads = threads});
      auto [bx] = kernel.block_index();
      auto x = T::alloc_fragment({bm, bn}, dt, "x");
      auto xf = T::alloc_fragment({bm, bn}, T::f32, "xf");
      auto y = T::alloc_fragment({bm, bn}, dt, "y");
      auto r = T::alloc_fragment({bm}, T::f32, "r");
      // Several chunks accumulate into r (clear = false) from its identity.
      if (chunks > 1) {
        if (kind == Reduce::kMax) {
          T::fill(r, -3.0e38f);
        } else if (kind == Reduce::kMin) {
          T::fill(r, 3.0e38f);
        } else {
          T::clear(r);
        }
      }
      for (auto j : T::Serial(chunks)) {
        T::copy(X(bx * bm, j * bn), x);
        for (auto [i, k] : T::Parallel(bm, bn))
          xf(i, k) = T::cast(x(i, k), T::f32);
        ReduceRows(kind, xf, r, /*clear=*/chunks == 1);
        if (column_sums) {
          auto col = T::alloc_fragment({bn}, T::f32, "col");
          T::reduce_sum(xf, col, {.dim = 0});
          T::atomic_add((*S)(j * bn), col);
        }
      }
      for (auto j : T::Serial(chunks)) {
        T::copy(X(bx * bm, j * bn), x);
        // r over N keeps the values (and their prefix sums) of order 1.
        const float scale = 1.0f / static_cast<float>(N);
        for (auto [i, k] : T::Parallel(bm, bn)) {
          const T::Expr v = T::cast(x(i, k), T::f32);
          xf(i, k) = combine == 0   ? v - r(i) * scale
                     : combine == 1 ? v * r(i) * scale
                                    : v + r(i) * scale;
        }
        if (cumsum) T::cumsum(xf, {.dim = 1, .reverse = reverse});
        for (auto [i, k] : T::Parallel(bm, bn)) y(i, k) = T::cast(xf(i, k), dt);
        T::copy(y, Y(bx * bm, j * bn));
      }
      T::copy(r, R(bx * bm));
    }
    return p.finish();
  };
  return c;
}

}  // namespace

std::vector<SeedCase> RandomTileCases(uint64_t seed, int count) {
  Dice d(seed);
  std::vector<SeedCase> cases;
  for (int i = 0; i < count; ++i) {
    const std::string name = absl::StrCat("random_", seed, "_", i);
    cases.push_back(d.Chance(50) ? GemmCase(d, name) : RowCase(d, name));
    cases.back().input_seed = seed * 1000 + static_cast<uint64_t>(i) * 16 + 1;
  }
  return cases;
}

}  // namespace tessel::fuzz
