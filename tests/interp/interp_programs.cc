#include "tests/interp/interp_programs.h"

#include "absl/strings/str_cat.h"
#include "tests/dsl/seed_programs.h"

namespace tessel::interp_test {

namespace T = tessel;

absl::StatusOr<Program> ReduceProgram(ReduceFn reduce, bool clear) {
  constexpr int R = kTileRows, N = kTileCols;
  T::ProgramBuilder p("reduce");
  auto X = p.tensor("X", {R, N}, T::f32);
  auto Y = p.tensor("Y", {R}, T::f32);
  auto Z = p.tensor("Z", {N}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({R, N}, T::f32, "x");
    auto y = T::alloc_fragment({R}, T::f32, "y");
    auto z = T::alloc_fragment({N}, T::f32, "z");
    T::copy(X(0, 0), x);
    T::fill(y, 0.5);
    T::fill(z, 0.5);
    reduce(x, y, {.dim = 1, .clear = clear}, TESSEL_HERE);
    reduce(x, z, {.dim = 0, .clear = clear}, TESSEL_HERE);
    T::copy(y, Y(0));
    T::copy(z, Z(0));
  }
  return p.finish();
}

absl::StatusOr<Program> IntegerReduceProgram(DataType dtype, int n,
                                             bool take_max) {
  T::ProgramBuilder p("int_reduce");
  auto X = p.tensor("X", {1, n}, dtype);
  auto Y = p.tensor("Y", {1}, dtype);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({1, n}, dtype, "x");
    auto y = T::alloc_fragment({1}, dtype, "y");
    T::copy(X(0, 0), x);
    if (take_max) {
      T::reduce_max(x, y, {.dim = 1});
    } else {
      T::reduce_min(x, y, {.dim = 1});
    }
    T::copy(y, Y(0));
  }
  return p.finish();
}

absl::StatusOr<Program> F32SumProgram() {
  T::ProgramBuilder p("f32_sum");
  auto X = p.tensor("X", {1, 3}, T::f32);
  auto Y = p.tensor("Y", {1}, T::f32);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({1, 3}, T::f32, "x");
    auto y = T::alloc_fragment({1}, T::f32, "y");
    T::copy(X(0, 0), x);
    T::reduce_sum(x, y, {.dim = 1});
    T::copy(y, Y(0));
  }
  return p.finish();
}

absl::StatusOr<Program> CumsumProgram(int dim, bool reverse, bool in_place) {
  constexpr int R = kTileRows, N = kTileCols;
  T::ProgramBuilder p("cumsum");
  auto X = p.tensor("X", {R, N}, T::f32);
  auto Y = p.tensor("Y", {R, N}, T::f32);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_shared({R, N}, T::f32, "x");
    auto y = T::alloc_fragment({R, N}, T::f32, "y");
    T::copy(X(0, 0), x);
    if (in_place) {
      T::cumsum(x, {.dim = dim, .reverse = reverse});
      T::copy(x, Y(0, 0));
    } else {
      T::cumsum(x, y, {.dim = dim, .reverse = reverse});
      T::copy(y, Y(0, 0));
    }
  }
  return p.finish();
}

absl::StatusOr<Program> FloatElementwiseProgram() {
  T::ProgramBuilder p("elementwise");
  auto M = p.dim("M");
  auto X = p.tensor("X", {M, 32}, T::f32);
  auto Y = p.tensor("Y", {M, 32}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(M, 16));
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({16, 32}, T::f32, "x");
    auto y = T::alloc_shared({16, 32}, T::f32, "y");
    T::copy(X(bx * 16, 0), x);
    for (auto [i, j] : T::Parallel(16, 32)) {
      y(i, j) = T::select(x(i, j) > 0, T::exp2(x(i, j)) * 2,
                          T::sqrt(T::abs(x(i, j))) - T::cast(i + j, T::f32));
    }
    T::copy(y, Y(bx * 16, 0));
  }
  return p.finish();
}

absl::StatusOr<Program> IntegerOpsProgram() {
  T::ProgramBuilder p("int_ops");
  auto X = p.tensor("X", {64}, T::i32);
  auto Y = p.tensor("Y", {4, 64}, T::i32);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_local({64}, T::i32, "x");
    T::copy(X(0), x);
    for (auto i : T::Parallel(64)) {
      Y(0, i) = x(i) / 3;  // floor division
      Y(1, i) = x(i) % 3;  // floor modulo
      Y(2, i) = (x(i) & 6) ^ (x(i) << 2);
      Y(3, i) = T::max(x(i), -5) * T::min(x(i), 7);
    }
  }
  return p.finish();
}

absl::StatusOr<Program> BoundaryProgram() {
  T::ProgramBuilder p("boundary");
  auto X = p.tensor("X", {10}, T::f32);
  auto Y = p.tensor("Y", {10}, T::f32);
  auto S = p.tensor("S", {1}, T::f32);
  {
    T::Kernel kernel(1);
    auto t = T::alloc_fragment({16}, T::f32, "t");
    auto sum = T::alloc_fragment({1}, T::f32, "sum");
    T::fill(t, 7);
    T::copy(X(4), t);  // X[4..9] then six zeros (not the 7s)
    T::reduce_sum(t, sum, {.dim = 0});
    T::copy(sum, S(0));
    T::fill(t, 3);
    T::copy(t, Y(-2));  // starts before the edge and runs past the end
  }
  return p.finish();
}

absl::StatusOr<Program> PrintProgram() {
  T::ProgramBuilder p("print");
  auto X = p.tensor("X", {2}, T::f32);
  {
    T::Kernel kernel(2);
    auto [bx] = kernel.block_index();
    auto t = T::alloc_fragment({2}, T::f32, "t");
    T::fill(t, 1.5);
    T::print(bx * 10, "bx");
    T::print(t, "tile");
    T::copy(t, X(0));
  }
  return p.finish();
}

absl::StatusOr<Program> RoundingCopyProgram(DataType dtype, int n) {
  T::ProgramBuilder p("round");
  auto X = p.tensor("X", {n}, T::f32);
  auto Y = p.tensor("Y", {n}, dtype);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({n}, T::f32, "x");
    auto y = T::alloc_shared({n}, dtype, "y");
    T::copy(X(0), x);
    T::copy(x, y);  // rounds to dtype
    T::copy(y, Y(0));
  }
  return p.finish();
}

absl::StatusOr<Program> F16ArithmeticProgram() {
  T::ProgramBuilder p("f16_ops");
  auto X = p.tensor("X", {4}, T::f16);
  auto Y = p.tensor("Y", {4}, T::f16);
  {
    T::Kernel kernel(1);
    auto x = T::alloc_fragment({4}, T::f16, "x");
    T::copy(X(0), x);
    for (auto i : T::Parallel(4)) x(i) = (x(i) + 1) + 1;
    T::copy(x, Y(0));
  }
  return p.finish();
}

absl::StatusOr<Program> TinyGemmProgram(DataType in, DataType acc) {
  T::ProgramBuilder p("tiny_gemm");
  auto A = p.tensor("A", {16, 16}, in);
  auto B = p.tensor("B", {16, 16}, in);
  auto C = p.tensor("C", {16, 16}, acc);
  {
    T::Kernel kernel(1);
    auto a = T::alloc_shared({16, 16}, in, "a");
    auto b = T::alloc_shared({16, 16}, in, "b");
    auto c = T::alloc_fragment({16, 16}, acc, "c");
    T::copy(A(0, 0), a);
    T::copy(B(0, 0), b);
    T::gemm(a, b, c, {.clear_accum = true});
    T::copy(c, C(0, 0));
  }
  return p.finish();
}

absl::StatusOr<Program> F64ScalarProgram() {
  T::ProgramBuilder p("f64");
  auto X = p.tensor("X", {2}, T::f64);
  auto Y = p.tensor("Y", {1}, T::f64);
  {
    T::Kernel kernel(1);
    Y(0) = X(0) * X(1) + 1;
  }
  return p.finish();
}

std::vector<NamedProgram> InterpPrograms() {
  std::vector<NamedProgram> out;
  auto add = [&](std::string name,
                 std::function<absl::StatusOr<Program>()> make) {
    out.push_back({std::move(name), std::move(make)});
  };
  // tile_ops_test.cc
  const std::pair<const char*, ReduceFn> reduces[] = {
      {"sum", &T::reduce_sum},       {"max", &T::reduce_max},
      {"min", &T::reduce_min},       {"abssum", &T::reduce_abssum},
      {"absmax", &T::reduce_absmax},
  };
  for (auto [name, fn] : reduces) {
    for (bool clear : {true, false}) {
      add(absl::StrCat("reduce_", name, clear ? "_clear" : "_accumulate"),
          [fn, clear] { return ReduceProgram(fn, clear); });
    }
  }
  // The dtypes and row lengths IntegerMaxMinStartFromTheDtypesRange runs.
  const std::pair<DataType, int> int_reduces[] = {
      {i8, 3}, {u32, 2}, {i64, 2}, {u8, 2}};
  for (auto [dtype, n] : int_reduces) {
    for (bool take_max : {true, false}) {
      add(absl::StrCat("reduce_", take_max ? "max_" : "min_",
                       std::string(dtype_name(dtype)), "_", n),
          [dtype, n, take_max] {
            return IntegerReduceProgram(dtype, n, take_max);
          });
    }
  }
  add("f32_sum", F32SumProgram);
  for (int dim : {0, 1}) {
    for (bool reverse : {false, true}) {
      for (bool in_place : {false, true}) {
        add(absl::StrCat("cumsum_dim", dim, reverse ? "_reverse" : "",
                         in_place ? "_in_place" : ""),
            [=] { return CumsumProgram(dim, reverse, in_place); });
      }
    }
  }
  add("float_elementwise", FloatElementwiseProgram);
  add("integer_ops", IntegerOpsProgram);
  add("boundary", BoundaryProgram);
  add("print", PrintProgram);
  add("row_softmax_cumsum_70x48",
      [] { return seed::RowSoftmaxCumsum(70, 48); });
  // dtype_test.cc
  for (DataType t : {f16, bf16, fp8_e4m3, fp8_e5m2}) {
    add(absl::StrCat("rounding_copy_", std::string(dtype_name(t))),
        [t] { return RoundingCopyProgram(t, 6); });
  }
  add("f16_arithmetic", F16ArithmeticProgram);
  add("tiny_gemm_f16_f32", [] { return TinyGemmProgram(f16, f32); });
  add("tiny_gemm_f64_f64", [] { return TinyGemmProgram(f64, f64); });
  add("f64_scalar", F64ScalarProgram);
  // gemm_test.cc and attention_test.cc: the seed programs at their sizes.
  add("gemm_ragged_f32_out",
      [] { return seed::TiledGemm(200, 130, 70, {}, f32); });
  add("gemm_ragged_f16_out", [] { return seed::TiledGemm(150, 200, 100); });
  add("gemm_symbolic_m", [] { return seed::TiledGemmDynamicM(96, 64); });
  add("gemm_split_k", [] { return seed::SplitKGemm(130, 100, 200, 3); });
  add("gemm_mbarrier_pipeline",
      [] { return seed::MbarrierPipelinedGemm(100, 70, 150); });
  add("gemm_256_cubed", [] { return seed::TiledGemm(256, 256, 256); });
  add("linear_attention_forward",
      [] { return seed::LinearAttentionForward(2, 100, 2, 128, 128); });
  add("linear_attention_backward",
      [] { return seed::LinearAttentionBackward(1, 100, 2, 128, 192); });
  return out;
}

}  // namespace tessel::interp_test
