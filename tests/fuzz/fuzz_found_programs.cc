#include "tests/fuzz/fuzz_found_programs.h"

#include <cstdint>
#include <utility>

#include "tessel/tessel.h"

namespace tessel::fuzz {
namespace {

namespace T = tessel;
using seed_test::Argument;
using seed_test::Role;

// A shared tile allocated after a warp-specialized Pipelined loop.
absl::StatusOr<Program> SharedTileAfterPipelinedLoop() {
  T::ProgramBuilder p("tile_after_loop");
  auto A = p.tensor("A", {64, 16}, T::f16);
  auto B = p.tensor("B", {32, 16}, T::f16);
  auto C = p.tensor("C", {64, 32}, T::f16);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto As = T::alloc_shared({64, 16}, T::f16);
    auto Bs = T::alloc_shared({32, 16}, T::f16);
    auto acc = T::alloc_fragment({64, 32}, T::f32);
    T::clear(acc);
    for (auto i : T::Pipelined(1, {.num_stages = 2})) {
      T::copy(A(0, i * 16), As);
      T::copy(B(0, i * 16), Bs);
      T::gemm(As, Bs, acc, {.transpose_B = true});
    }
    auto Cs = T::alloc_shared({64, 32}, T::f16);
    T::copy(acc, Cs);
    T::copy(Cs, C(0, 0));
  }
  return p.finish();
}

// A row cumsum from f16 into f32 (the carry mixed the two types).
absl::StatusOr<Program> CumsumIntoWiderType(T::DataType from, T::DataType to,
                                            int rows, int cols) {
  T::ProgramBuilder p("cumsum_wider");
  auto X = p.tensor("X", {rows, cols}, from);
  auto Y = p.tensor("Y", {rows, cols}, to);
  {
    T::Kernel kernel(1, {.threads = 32});
    auto x = T::alloc_fragment({rows, cols}, from);
    auto y = T::alloc_fragment({rows, cols}, to);
    T::copy(X(0, 0), x);
    T::cumsum(x, y, {.dim = 1});
    T::copy(y, Y(0, 0));
  }
  return p.finish();
}

// INT_MIN as an i32 constant (its literal was a long long: max ambiguous).
absl::StatusOr<Program> MaxWithIntMin() {
  T::ProgramBuilder p("int_min");
  auto Y = p.tensor("Y", {64}, T::i32);
  {
    T::Kernel kernel(1, {.threads = 64});
    auto y = T::alloc_fragment({64}, T::i32);
    for (auto i : T::Parallel(64)) y(i) = T::max(T::min_value(T::i32), i);
    T::copy(y, Y(0));
  }
  return p.finish();
}

// A register A operand under the default warp policy: sm_80's square 2x2
// grid refused it while sm_90a (and so the CPU target) took it.
absl::StatusOr<Program> RegisterAGemm() {
  T::ProgramBuilder p("register_a");
  auto A = p.tensor("A", {64, 64}, T::bf16);
  auto B = p.tensor("B", {64, 64}, T::bf16);
  auto C = p.tensor("C", {64, 64}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto As = T::alloc_shared({64, 64}, T::bf16);
    auto Bs = T::alloc_shared({64, 64}, T::bf16);
    auto Af = T::alloc_fragment({64, 64}, T::bf16);
    auto acc = T::alloc_fragment({64, 64}, T::f32);
    T::clear(acc);
    T::copy(A(0, 0), As);
    T::copy(B(0, 0), Bs);
    T::copy(As, Af);
    T::gemm(Af, Bs, acc, {.transpose_B = true});
    T::copy(acc, C(0, 0));
  }
  return p.finish();
}

Argument In(const char* name, DataType t, std::vector<int64_t> shape) {
  return {name, t, std::move(shape), Role::kInput};
}
Argument Out(const char* name, DataType t, std::vector<int64_t> shape) {
  return {name, t, std::move(shape), Role::kOutput};
}

}  // namespace

std::vector<seed_test::SeedCase> FuzzFoundCases() {
  // Tolerances: f16 outputs of 16-term products; f32 sums in another order
  // than the interpreter's; bf16 partial sums rounded at every step (a
  // few ulps at |sum| ~ 10); f32 64-term bf16 gemms.
  return {
      {"tile_after_pipelined_loop",
       SharedTileAfterPipelinedLoop,
       {In("A", f16, {64, 16}), In("B", f16, {32, 16}),
        Out("C", f16, {64, 32})},
       2e-2,
       2e-2},
      {"cumsum_f16_into_f32",
       [] { return CumsumIntoWiderType(f16, f32, 1, 48); },
       {In("X", f16, {1, 48}), Out("Y", f32, {1, 48})},
       1e-4,
       1e-4},
      {"cumsum_f32_into_bf16",
       [] { return CumsumIntoWiderType(f32, bf16, 4, 96); },
       {In("X", f32, {4, 96}), Out("Y", bf16, {4, 96})},
       5e-2,
       2.5e-1},
      {"max_with_int_min", MaxWithIntMin, {Out("Y", i32, {64})}, 0, 0},
      {"register_a_default_policy",
       RegisterAGemm,
       {In("A", bf16, {64, 64}), In("B", bf16, {64, 64}),
        Out("C", f32, {64, 64})},
       1e-3,
       1e-3},
  };
}

}  // namespace tessel::fuzz
