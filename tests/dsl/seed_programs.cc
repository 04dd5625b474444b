#include "tests/dsl/seed_programs.h"

#include <cmath>

namespace tessel::seed {

namespace T = tessel;

absl::StatusOr<Program> TiledGemm(int M, int N, int K, GemmTile t,
                                  DataType c_dtype) {
  T::ProgramBuilder p("gemm");
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, c_dtype);
  {
    T::Kernel kernel(T::ceildiv(N, t.n), T::ceildiv(M, t.m),
                     {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    auto A_shared = T::alloc_shared({t.m, t.k}, T::f16, "A_shared");
    auto B_shared = T::alloc_shared({t.k, t.n}, T::f16, "B_shared");
    auto C_local = T::alloc_fragment({t.m, t.n}, T::f32, "C_local");
    T::clear(C_local);
    for (auto k : T::Pipelined(T::ceildiv(K, t.k),
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * t.m, k * t.k), A_shared);
      T::copy(B(k * t.k, bx * t.n), B_shared);
      T::gemm(A_shared, B_shared, C_local);
    }
    T::copy(C_local, C(by * t.m, bx * t.n));
  }
  return p.finish();
}

absl::StatusOr<Program> TiledGemmDynamicM(int N, int K, GemmTile t) {
  T::ProgramBuilder p("gemm_dynamic_m");
  auto M = T::dim("M");
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, T::f16);
  {
    T::Kernel kernel(T::ceildiv(N, t.n), T::ceildiv(M, t.m),
                     {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    auto A_shared = T::alloc_shared({t.m, t.k}, T::f16, "A_shared");
    auto B_shared = T::alloc_shared({t.k, t.n}, T::f16, "B_shared");
    auto C_local = T::alloc_fragment({t.m, t.n}, T::f32, "C_local");
    T::clear(C_local);
    for (auto k : T::Pipelined(T::ceildiv(K, t.k),
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * t.m, k * t.k), A_shared);
      T::copy(B(k * t.k, bx * t.n), B_shared);
      T::gemm(A_shared, B_shared, C_local);
    }
    T::copy(C_local, C(by * t.m, bx * t.n));
  }
  return p.finish();
}

absl::StatusOr<Program> SplitKGemm(int M, int N, int K, int split_k,
                                   GemmTile t) {
  T::ProgramBuilder p("gemm_split_k");
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, T::f32);
  // Each split covers a whole number of k tiles, so splits never overlap.
  const int k_per_split = (K + split_k * t.k - 1) / (split_k * t.k) * t.k;
  {
    T::Kernel kernel(T::ceildiv(N, t.n), T::ceildiv(M, t.m), split_k,
                     {.threads = t.threads});
    auto [bx, by, bz] = kernel.block_index();
    auto A_shared = T::alloc_shared({t.m, t.k}, T::f16, "A_shared");
    auto B_shared = T::alloc_shared({t.k, t.n}, T::f16, "B_shared");
    auto C_local = T::alloc_fragment({t.m, t.n}, T::f32, "C_local");
    T::clear(C_local);
    for (auto k : T::Pipelined(k_per_split / t.k,
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * t.m, bz * k_per_split + k * t.k), A_shared);
      T::copy(B(bz * k_per_split + k * t.k, bx * t.n), B_shared);
      T::gemm(A_shared, B_shared, C_local);
    }
    T::atomic_add(C(by * t.m, bx * t.n), C_local);
  }
  return p.finish();
}

absl::StatusOr<Program> MbarrierPipelinedGemm(int M, int N, int K) {
  constexpr int block_m = 64, block_n = 64, block_k = 32, num_stages = 2,
                threads = 128;
  T::ProgramBuilder p("fused_chunk_kernel");
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(N, block_n), T::ceildiv(M, block_m),
                     {.threads = threads});
    auto [bx, by] = kernel.block_index();
    auto A_shared = T::alloc_shared({block_m, block_k}, T::f16, "A_shared");
    auto B_shared = T::alloc_shared({block_k, block_n}, T::f16, "B_shared");
    auto C_local = T::alloc_fragment({block_m, block_n}, T::f32, "C_local");
    T::create_list_of_mbarrier({threads, threads});
    T::clear(C_local);
    auto num_chunks = T::ceildiv(K, block_k);
    for (auto i :
         T::Pipelined(0, num_chunks, {.num_stages = num_stages, .name = "i"})) {
      T::copy(A(by * block_m, i * block_k), A_shared);  // stage 1: load
      T::copy(B(i * block_k, bx * block_n), B_shared);
      T::mbarrier_arrive(i % num_stages);
      T::mbarrier_wait_parity(i % num_stages,
                              (i / num_stages) % 2);  // stage 2: compute
      T::gemm(A_shared, B_shared, C_local);
    }
    T::copy(C_local, C(by * block_m, bx * block_n));
  }
  return p.finish();
}

absl::StatusOr<Program> LinearAttentionForward(int B, int S, int H, int DK,
                                               int DV, LinearAttentionTile t) {
  const int C = t.chunk, BK = t.bk, BV = t.bv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(DK));
  T::ProgramBuilder p("linear_attention_fwd");
  auto Q = p.tensor("Q", {B, S, H, DK}, T::f16);
  auto K = p.tensor("K", {B, S, H, DK}, T::f16);
  auto V = p.tensor("V", {B, S, H, DV}, T::f16);
  auto O = p.tensor("O", {B, S, H, DV}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(DV, BV), T::ceildiv(DK, BK), B * H,
                     {.threads = 128});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto q = T::alloc_shared({C, BK}, T::f16, "q");
    auto k = T::alloc_shared({C, BK}, T::f16, "k");
    auto v = T::alloc_shared({C, BV}, T::f16, "v");
    auto h = T::alloc_fragment({BK, BV}, T::f32, "h");
    auto h_shared = T::alloc_shared({BK, BV}, T::f16, "h_shared");
    auto s = T::alloc_fragment({C, C}, T::f32, "s");
    auto s_shared = T::alloc_shared({C, C}, T::f16, "s_shared");
    auto o = T::alloc_fragment({C, BV}, T::f32, "o");
    auto o_shared = T::alloc_shared({C, BV}, T::f32, "o_shared");
    T::annotate_layout({{o_shared, T::make_swizzled_layout(o_shared)}});
    T::use_swizzle(10);
    T::clear(h);
    for (auto i : T::Pipelined(0, T::ceildiv(S, C), {.name = "i"})) {
      auto rows = T::slice(i * C, (i + 1) * C);
      T::copy(Q(i_b, rows, i_h, T::slice(i_k * BK, (i_k + 1) * BK)), q);
      for (auto [r, c] : T::Parallel(C, BK)) q(r, c) = q(r, c) * scale;
      T::copy(K(i_b, rows, i_h, T::slice(i_k * BK, (i_k + 1) * BK)), k);
      T::copy(V(i_b, rows, i_h, T::slice(i_v * BV, (i_v + 1) * BV)), v);
      T::gemm(q, k, s, {.transpose_B = true, .clear_accum = true});
      for (auto [r, c] : T::Parallel(C, C))
        s_shared(r, c) = T::select(r >= c, s(r, c), 0);
      T::gemm(s_shared, v, o, {.clear_accum = true});
      T::copy(h, h_shared);
      T::gemm(k, v, h, {.transpose_A = true});
      T::gemm(q, h_shared, o);
      T::copy(o, o_shared);
      T::atomic_add(O(i_b, rows, i_h, T::slice(i_v * BV, (i_v + 1) * BV)),
                    o_shared);
    }
  }
  return p.finish();
}

absl::StatusOr<Program> LinearAttentionBackward(int B, int S, int H, int DK,
                                                int DV, LinearAttentionTile t) {
  const int C = t.chunk, BK = t.bk, BV = t.bv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(DK));
  T::ProgramBuilder p("linear_attention_bwd");
  auto Q = p.tensor("Q", {B, S, H, DK}, T::f16);
  auto K = p.tensor("K", {B, S, H, DK}, T::f16);
  auto V = p.tensor("V", {B, S, H, DV}, T::f16);
  auto dO = p.tensor("dO", {B, S, H, DV}, T::f16);
  auto dQ = p.tensor("dQ", {B, S, H, DK}, T::f32);
  auto dK = p.tensor("dK", {B, S, H, DK}, T::f32);
  auto dV = p.tensor("dV", {B, S, H, DV}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(DV, BV), T::ceildiv(DK, BK), B * H,
                     {.threads = 128});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto ds = T::alloc_fragment({C, C}, T::f32, "ds");
    auto ds_shared = T::alloc_shared({C, C}, T::f16, "ds_shared");
    auto dq = T::alloc_fragment({C, BK}, T::f32, "dq");
    auto dq_shared = T::alloc_shared({C, BK}, T::f32, "dq_shared");
    auto dk = T::alloc_fragment({C, BK}, T::f32, "dk");
    auto dk_shared = T::alloc_shared({C, BK}, T::f32, "dk_shared");
    auto dv = T::alloc_fragment({C, BV}, T::f32, "dv");
    auto dv_shared = T::alloc_shared({C, BV}, T::f32, "dv_shared");
    auto q = T::alloc_shared({C, BK}, T::f16, "q");
    auto k = T::alloc_shared({C, BK}, T::f16, "k");
    auto v = T::alloc_shared({C, BV}, T::f16, "v");
    auto d_o = T::alloc_shared({C, BV}, T::f16, "do");
    auto h = T::alloc_fragment({BV, BK}, T::f32, "h");
    auto h_shared = T::alloc_shared({BV, BK}, T::f16, "h_shared");
    auto dh = T::alloc_fragment({BK, BV}, T::f32, "dh");
    auto dh_shared = T::alloc_shared({BK, BV}, T::f16, "dh_shared");
    T::annotate_layout({{dq_shared, T::make_swizzled_layout(dq_shared)},
                        {dk_shared, T::make_swizzled_layout(dk_shared)},
                        {dv_shared, T::make_swizzled_layout(dv_shared)}});
    T::use_swizzle(10);
    T::clear(h);
    T::clear(dh);
    auto num_chunks = T::ceildiv(S, C);
    auto k_cols = [&] { return T::slice(i_k * BK, (i_k + 1) * BK); };
    auto v_cols = [&] { return T::slice(i_v * BV, (i_v + 1) * BV); };
    // dQ: forward sweep over the chunks.
    for (auto i : T::Pipelined(0, num_chunks, {.name = "i"})) {
      auto rows = T::slice(i * C, (i + 1) * C);
      T::copy(K(i_b, rows, i_h, k_cols()), k);
      T::copy(V(i_b, rows, i_h, v_cols()), v);
      T::copy(dO(i_b, rows, i_h, v_cols()), d_o);
      T::gemm(d_o, v, ds, {.transpose_B = true, .clear_accum = true});
      for (auto [r, c] : T::Parallel(C, C))
        ds_shared(r, c) = T::select(r >= c, ds(r, c), 0);
      T::gemm(ds_shared, k, dq, {.clear_accum = true});
      T::copy(h, h_shared);
      T::gemm(v, k, h, {.transpose_A = true});
      T::gemm(d_o, h_shared, dq);
      for (auto [r, c] : T::Parallel(C, BK)) dq(r, c) *= scale;
      T::copy(dq, dq_shared);
      T::atomic_add(dQ(i_b, rows, i_h, k_cols()), dq_shared);
    }
    // dK, dV: reverse sweep.
    for (auto i : T::Pipelined(0, num_chunks, {.name = "i"})) {
      T::Expr start = num_chunks - 1 - i;
      auto rows = T::slice(start * C, (start + 1) * C);
      T::copy(Q(i_b, rows, i_h, k_cols()), q);
      for (auto [r, c] : T::Parallel(C, BK)) q(r, c) = q(r, c) * scale;
      T::copy(K(i_b, rows, i_h, k_cols()), k);
      T::copy(V(i_b, rows, i_h, v_cols()), v);
      T::copy(dO(i_b, rows, i_h, v_cols()), d_o);
      // dk = mask_upper(v do^T) q + v dh^T
      T::gemm(v, d_o, ds, {.transpose_B = true, .clear_accum = true});
      for (auto [r, c] : T::Parallel(C, C))
        ds_shared(r, c) = T::select(r <= c, ds(r, c), 0);
      T::gemm(ds_shared, q, dk, {.clear_accum = true});
      T::copy(dh, dh_shared);
      T::gemm(v, dh_shared, dk, {.transpose_B = true});
      // dv = mask_upper(k q^T) do + k dh
      T::gemm(k, q, ds, {.transpose_B = true, .clear_accum = true});
      for (auto [r, c] : T::Parallel(C, C))
        ds_shared(r, c) = T::select(r <= c, ds(r, c), 0);
      T::gemm(ds_shared, d_o, dv, {.clear_accum = true});
      T::gemm(k, dh_shared, dv);
      // dh += q^T do
      T::gemm(q, d_o, dh, {.transpose_A = true});
      T::copy(dk, dk_shared);
      T::atomic_add(dK(i_b, rows, i_h, k_cols()), dk_shared);
      T::copy(dv, dv_shared);
      T::atomic_add(dV(i_b, rows, i_h, v_cols()), dv_shared);
    }
  }
  return p.finish();
}

absl::StatusOr<Program> RowSoftmaxCumsum(int M, int N) {
  constexpr int rows = 32;
  T::ProgramBuilder p("row_softmax_cumsum");
  auto X = p.tensor("X", {M, N}, T::f32);
  auto Y = p.tensor("Y", {M, N}, T::f32);
  auto Z = p.tensor("Z", {M, N}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(M, rows), {.threads = 128});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({rows, N}, T::f32, "x");
    auto row_max = T::alloc_fragment({rows}, T::f32, "row_max");
    auto row_sum = T::alloc_fragment({rows}, T::f32, "row_sum");
    auto log2e = T::alloc_var(T::f32, "log2e");
    log2e = 1.4426950408889634;
    T::copy(X(bx * rows, 0), x);
    T::reduce_max(x, row_max, {.dim = 1});
    for (auto [i, j] : T::Parallel(rows, N)) {
      x(i, j) = T::exp2((x(i, j) - row_max(i)) * log2e);
    }
    T::reduce_sum(x, row_sum, {.dim = 1});
    for (auto i : T::Parallel(rows)) {
      T::If(row_sum(i) > 0, [&] { row_sum(i) = 1.0 / row_sum(i); }).Else([&] {
        row_sum(i) = 0;
      });
    }
    for (auto [i, j] : T::Parallel(rows, N)) x(i, j) *= row_sum(i);
    T::copy(x, Y(bx * rows, 0));
    T::cumsum(x, {.dim = 1});
    T::copy(x, Z(bx * rows, 0));
  }
  return p.finish();
}

}  // namespace tessel::seed
