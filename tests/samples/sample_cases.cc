#include "tests/samples/sample_cases.h"

#include <array>
#include <string>

#include "samples/decode_attention.h"
#include "samples/decode_attention_workload.h"
#include "samples/flash_attention.h"
#include "samples/flash_attention_bwd.h"
#include "samples/flash_attention_varlen.h"
#include "samples/gemm.h"
#include "samples/grouped_gemm.h"
#include "samples/layernorm.h"
#include "samples/linear_attention.h"
#include "samples/mla_decode.h"
#include "samples/rmsnorm.h"
#include "samples/softmax.h"
#include "samples/splitk_gemm.h"
#include "samples/w4a16_gemm.h"

namespace tessel::samples {

// The codegen's missing pieces, named by the op the sample needs.
namespace {

// None today; an entry reads
//   {"case_part", "sm_80", "error substring", "the missing feature"},
constexpr std::array<KnownGap, 0> kNotYetSupported = {};

}  // namespace

const KnownGap* FindCodegenGap(const std::string& name,
                               const std::string& arch) {
  for (const KnownGap& g : kNotYetSupported) {
    if (name.find(g.case_part) != std::string::npos &&
        (std::string(g.arch).empty() || arch == g.arch)) {
      return &g;
    }
  }
  return nullptr;
}

std::vector<SampleCase> SmallCases() {
  std::vector<SampleCase> cases;
  auto gemm = [&](std::string name, GemmConfig c) {
    cases.push_back({"gemm_" + name, [c] { return GemmWorkload(c, 11); }});
  };
  gemm("nn_f16", {.M = 128, .N = 128, .K = 64});
  gemm("nn_f16_ragged", {.M = 200, .N = 136, .K = 88});
  gemm("nn_f16_odd", {.M = 67, .N = 45, .K = 51});
  gemm("nt_bf16", {.M = 96,
                   .N = 160,
                   .K = 72,
                   .in_dtype = bf16,
                   .out_dtype = bf16,
                   .layout = GemmLayout::kNT});
  gemm("tn_f16_f32out", {.M = 72,
                         .N = 200,
                         .K = 40,
                         .in_dtype = f16,
                         .out_dtype = f32,
                         .layout = GemmLayout::kTN});
  gemm("tt_bf16_f32out", {.M = 64,
                          .N = 64,
                          .K = 64,
                          .in_dtype = bf16,
                          .out_dtype = f32,
                          .layout = GemmLayout::kTT});
  // The fused bias + ReLU epilogue over the accumulator (a bias over N
  // broadcast over the rows), ragged; and the default 256x128 tile.
  gemm("nn_f16_bias_relu_ragged",
       {.M = 200, .N = 136, .K = 88, .bias_relu = true});
  gemm("nn_bf16_bias_relu_tile", {.M = 512,
                                  .N = 256,
                                  .K = 128,
                                  .in_dtype = bf16,
                                  .out_dtype = bf16,
                                  .bias_relu = true});
  // fp8 in the layout wgmma reads (NT: B stored [N, K]) with a tile of
  // 128-byte rows (wgmma k32 on sm_90a, FMA loops on sm_80; 3 stages fit
  // both): ragged through the TMA pipeline, tile multiples, rows the TMA
  // cannot map (K = 51: the cp.async path); NN runs FMA loops everywhere.
  const GemmTile fp8_tile{.block_m = 128,
                          .block_n = 256,
                          .block_k = 128,
                          .num_stages = 3,
                          .threads = 256};
  gemm("nt_e4m3_ragged", {.M = 200,
                          .N = 136,
                          .K = 272,
                          .in_dtype = fp8_e4m3,
                          .layout = GemmLayout::kNT,
                          .tile = fp8_tile});
  gemm("nt_e5m2_bf16out_tile", {.M = 256,
                                .N = 512,
                                .K = 384,
                                .in_dtype = fp8_e5m2,
                                .out_dtype = bf16,
                                .layout = GemmLayout::kNT,
                                .tile = fp8_tile});
  gemm("nt_e4m3_f32out_odd", {.M = 67,
                              .N = 45,
                              .K = 51,
                              .in_dtype = fp8_e4m3,
                              .out_dtype = f32,
                              .layout = GemmLayout::kNT,
                              .tile = fp8_tile});
  gemm("nn_e4m3_fma", {.M = 72,
                       .N = 64,
                       .K = 40,
                       .in_dtype = fp8_e4m3,
                       .tile = {.block_m = 64,
                                .block_n = 64,
                                .block_k = 32,
                                .num_stages = 2,
                                .threads = 128}});
  // K in slices (gemm_k_slices.h): partial sums, then the reduce kernel.
  // Ragged sizes and a ragged last slice (10 steps: 4 + 4 + 2), the bias in
  // the reduce; NT with f32 out, 3 steps in 3 slices of 1. 3 stages: the
  // tile fits sm_80 too.
  const GemmTile split_tile{.block_m = 128,
                            .block_n = 128,
                            .block_k = 64,
                            .num_stages = 3,
                            .split_k = 3};
  gemm("nn_f16_split_k_bias_relu_ragged",
       {.M = 200, .N = 136, .K = 600, .tile = split_tile, .bias_relu = true});
  gemm("nt_bf16_split_k_f32out_odd", {.M = 67,
                                      .N = 72,
                                      .K = 136,
                                      .in_dtype = bf16,
                                      .out_dtype = f32,
                                      .layout = GemmLayout::kNT,
                                      .tile = split_tile});
  auto splitk = [&](std::string name, SplitKConfig c) {
    cases.push_back(
        {"splitk_gemm_" + name, [c] { return SplitKGemmWorkload(c, 12); }});
  };
  splitk("f16", {.M = 128, .N = 96, .K = 256, .split_k = 4});
  splitk("bf16_ragged",
         {.M = 70, .N = 50, .K = 300, .split_k = 3, .in_dtype = bf16});
  // Groups of 0 rows (first, last, in a row), 1 row, a tile, a tile and 1,
  // rows of no group after them; the sm_90a tile (TMA producer, wgmma) in 2
  // stages, which sm_80 holds too, and the sm_80 tile; rows of 200 bytes
  // (K = 100) and C / B rows of 600 bytes (N = 300) that the TMA cannot take.
  GemmTile hopper = GroupedGemmTile(90);
  hopper.num_stages = 2;
  auto grouped = [&](std::string name, GroupedGemmConfig c,
                     std::vector<int> rows, int pad) {
    cases.push_back({"grouped_gemm_" + name, [c, rows, pad] {
                       return GroupedGemmWorkload(c, rows, 14, pad);
                     }});
  };
  grouped("f16_ragged", {.N = 96, .K = 80, .tile = hopper},
          {0, 1, 130, 0, 0, 128, 129, 5, 0}, 3);
  grouped(
      "bf16_kn_ragged",
      {.N = 300, .K = 72, .in_dtype = bf16, .b_k_major = false, .tile = hopper},
      {64, 0, 257, 1}, 0);
  grouped("f16_sm80_tile_k100",
          {.N = 136, .K = 100, .tile = GroupedGemmTile(80)}, {200, 0, 1, 77},
          0);
  auto la = [&](std::string name, LinearAttentionConfig c) {
    cases.push_back({"linear_attention_fwd_" + name, [c] {
                       return LinearAttentionForwardWorkload(c, false, 13);
                     }});
    cases.push_back({"linear_attention_fwd_mbarrier_" + name, [c] {
                       return LinearAttentionForwardWorkload(c, true, 13);
                     }});
    cases.push_back({"linear_attention_bwd_" + name,
                     [c] { return LinearAttentionBackwardWorkload(c, 13); }});
  };
  la("d64", {.B = 1, .S = 128, .H = 2, .DK = 64, .DV = 64});
  cases.push_back({"linear_attention_fwd_bwd_d64", [] {
                     return LinearAttentionForwardBackwardWorkload(
                         {.B = 1, .S = 128, .H = 1, .DK = 64, .DV = 64}, 13);
                   }});
  // The forward with its state and the one-sweep backward (default above),
  // ragged; the two-sweep backward on request; and DK tiles, where the
  // state backward does not apply.
  cases.push_back({"linear_attention_fwd_bwd_state_ragged", [] {
                     return LinearAttentionForwardBackwardWorkload(
                         {.B = 2, .S = 200, .H = 2, .DK = 64, .DV = 64}, 13);
                   }});
  cases.push_back({"linear_attention_fwd_bwd_two_sweeps_d64", [] {
                     return LinearAttentionForwardBackwardWorkload(
                         {.B = 1,
                          .S = 128,
                          .H = 1,
                          .DK = 64,
                          .DV = 64,
                          .state_backward = false},
                         13);
                   }});
  cases.push_back({"linear_attention_fwd_bwd_d128_tiles64", [] {
                     return LinearAttentionForwardBackwardWorkload(
                         {.B = 1, .S = 128, .H = 1, .DK = 128, .DV = 128}, 13);
                   }});
  la("ragged_s", {.B = 2, .S = 100, .H = 1, .DK = 64, .DV = 64});
  la("d128", {.B = 1, .S = 64, .H = 1, .DK = 128, .DV = 128});
  // fla's chunked form: states kernel, then every chunk in parallel.
  cases.push_back({"linear_attention_fwd_chunked_d64", [] {
                     return LinearAttentionChunkedForwardWorkload(
                         {.B = 1, .S = 150, .H = 2, .DK = 64, .DV = 64}, 13);
                   }});
  cases.push_back({"linear_attention_fwd_chunked_d128_tiles64", [] {
                     return LinearAttentionChunkedForwardWorkload(
                         {.B = 1,
                          .S = 128,
                          .H = 1,
                          .DK = 128,
                          .DV = 128,
                          .block_k = 64,
                          .block_v = 64},
                         13);
                   }});
  // One DK tile (O, dV written in f16), two DV tiles (dQ, dK atomics),
  // ragged S.
  la("d128_one_k_tile", {.B = 1,
                         .S = 150,
                         .H = 1,
                         .DK = 128,
                         .DV = 128,
                         .block_k = 128,
                         .block_v = 64});
  // Three pipeline stages (the backward's two sweeps stage their own
  // tiles: this fits sm_80's shared memory at D = 64).
  la("d64_stages3",
     {.B = 1, .S = 200, .H = 1, .DK = 64, .DV = 64, .num_stages = 3});
  // Serial chunk loops (num_stages 1) and tiles of 32 (atomics everywhere).
  la("d64_serial_tiles32", {.B = 1,
                            .S = 128,
                            .H = 1,
                            .DK = 64,
                            .DV = 64,
                            .block_k = 32,
                            .block_v = 32,
                            .num_stages = 1});
  auto fa = [&](std::string name, FlashAttentionConfig c) {
    for (bool causal : {false, true}) {
      FlashAttentionConfig cc = c;
      cc.causal = causal;
      cases.push_back({std::string("flash_attention_") +
                           (causal ? "causal_" : "full_") + name,
                       [cc] { return FlashAttentionWorkload(cc, 14); }});
    }
  };
  fa("d64", {.B = 1, .S = 128, .H = 2, .D = 64});
  fa("d128", {.B = 1, .S = 128, .H = 1, .D = 128});
  fa("d64_ragged", {.B = 2, .S = 100, .H = 1, .D = 64});
  // The older 64 x 64 tiles, and P through shared memory instead of
  // registers (the older form).
  fa("d64_bm64_bn64",
     {.B = 1, .S = 128, .H = 2, .D = 64, .block_m = 64, .block_n = 64});
  fa("d64_p_in_shared",
     {.B = 1, .S = 128, .H = 1, .D = 64, .p_in_registers = false});
  // Bigger tiles: 8 warps, 128 query rows, a sequence that is not a
  // multiple of them.
  fa("d128_bm128_8warps", {.B = 1,
                           .S = 200,
                           .H = 1,
                           .D = 128,
                           .block_m = 128,
                           .block_n = 64,
                           .threads = 256});
  // The warp-specialized shape on sm_90a: K and V through the TMA into a
  // two-stage ring, two consumer warpgroups; ragged S.
  fa("d128_bm128_bn128_8warps", {.B = 2,
                                 .S = 300,
                                 .H = 2,
                                 .D = 128,
                                 .block_m = 128,
                                 .block_n = 128,
                                 .threads = 256});
  // Three consumer warpgroups of 64 query rows each (384 threads).
  fa("d64_bm192_bn128_12warps", {.B = 1,
                                 .S = 333,
                                 .H = 2,
                                 .D = 64,
                                 .block_m = 192,
                                 .block_n = 128,
                                 .threads = 384});
  // FlashAttention-3's overlap (Pipelined order / stage: P V one key block
  // late, under the next block's softmax) in both warp-specialized shapes,
  // ragged S; two K / V stages at D128 (three, the bench tile, exceed
  // sm_80's shared memory: BenchShapes compiles those for sm_90a).
  fa("d128_bm128_bn128_8warps_overlap", {.B = 1,
                                         .S = 300,
                                         .H = 2,
                                         .D = 128,
                                         .block_m = 128,
                                         .block_n = 128,
                                         .num_stages = 2,
                                         .threads = 256,
                                         .overlap = true});
  fa("d64_bm192_bn128_12warps_overlap", {.B = 1,
                                         .S = 333,
                                         .H = 2,
                                         .D = 64,
                                         .block_m = 192,
                                         .block_n = 128,
                                         .num_stages = 3,
                                         .threads = 384,
                                         .overlap = true});
  // Causal query tiles aligned to the sequence's end (the ragged tile
  // first, clamped to row 0, overlapping the next one) and the mask after
  // S = Q K^T (which then overwrites its accumulator), with the
  // log-sum-exp; ragged S.
  fa("d64_bm192_bn128_12warps_align_end_mask_after_lse", {.B = 1,
                                                          .S = 333,
                                                          .H = 2,
                                                          .D = 64,
                                                          .lse = true,
                                                          .block_m = 192,
                                                          .block_n = 128,
                                                          .threads = 384,
                                                          .align_end = true,
                                                          .mask_after = true});
  // The mask after the gemm with the overlap's order / stage lists: with a
  // mask (causal) and without (full, S a multiple of block_n).
  fa("d64_bm192_bn128_12warps_mask_after_overlap", {.B = 1,
                                                    .S = 256,
                                                    .H = 2,
                                                    .D = 64,
                                                    .block_m = 192,
                                                    .block_n = 128,
                                                    .num_stages = 3,
                                                    .threads = 384,
                                                    .overlap = true,
                                                    .mask_after = true});
  // The consumer warpgroups taking turns at the gemms
  // (PassConfig::consumer_gemm_turns): three at D64 with the diagonal
  // options, two at D128 without the overlap; ragged S.
  fa("d64_bm192_bn128_12warps_gemm_turns", {.B = 1,
                                            .S = 333,
                                            .H = 2,
                                            .D = 64,
                                            .block_m = 192,
                                            .block_n = 128,
                                            .threads = 384,
                                            .align_end = true,
                                            .mask_after = true,
                                            .gemm_turns = true});
  fa("d128_bm128_bn128_8warps_gemm_turns", {.B = 1,
                                            .S = 300,
                                            .H = 2,
                                            .D = 128,
                                            .block_m = 128,
                                            .block_n = 128,
                                            .threads = 256,
                                            .gemm_turns = true});
  fa("d64_bm128_bn64_8warps", {.B = 1,
                               .S = 333,
                               .H = 3,
                               .D = 64,
                               .block_m = 128,
                               .block_n = 64,
                               .threads = 256});
  // Grouped-query heads (two query heads per key / value head) at the
  // default tile, ragged S.
  fa("gqa_d64_ragged", {.B = 1, .S = 100, .H = 4, .D = 64, .heads_kv = 2});
  // Multi-query (one key / value head) with the log-sum-exp, in the
  // warp-specialized shape on sm_90a, ragged S.
  fa("mqa_lse_d128_bm128_bn128_8warps", {.B = 1,
                                         .S = 300,
                                         .H = 3,
                                         .D = 128,
                                         .heads_kv = 1,
                                         .lse = true,
                                         .block_m = 128,
                                         .block_n = 128,
                                         .threads = 256});
  // Variable length (cu_seqlens): sequences shorter than a tile, ragged
  // ones, and padding tokens after the last sequence whose O must stay
  // unwritten; at the default tile and in the warp-specialized shape on
  // sm_90a (TMA origins read from cu_seqlens), with MQA and the LSE (causal
  // only, to save CI's NVRTC time: the full case differs in the mask).
  auto fa_varlen = [&](std::string name, FlashAttentionConfig c,
                       std::vector<int> seqlens, bool full = true) {
    for (bool causal : {false, true}) {
      if (!causal && !full) continue;
      FlashAttentionConfig cc = c;
      cc.causal = causal;
      cases.push_back({std::string("flash_attention_varlen_") +
                           (causal ? "causal_" : "full_") + name,
                       [cc, seqlens] {
                         return FlashAttentionVarlenWorkload(cc, seqlens, 23,
                                                             /*pad=*/7);
                       }});
    }
  };
  fa_varlen("d64", {.H = 2, .D = 64}, {1, 17, 100});
  fa_varlen("mqa_lse_d128_bm128_bn128_8warps",
            {.H = 2,
             .D = 128,
             .heads_kv = 1,
             .lse = true,
             .block_m = 128,
             .block_n = 128,
             .threads = 256},
            {1, 130, 17, 200}, /*full=*/false);
  // The forward's order / stage lists under the varlen guard (causal only).
  fa_varlen("d128_bm128_bn128_8warps_overlap",
            {.H = 2,
             .D = 128,
             .block_m = 128,
             .block_n = 128,
             .num_stages = 2,
             .threads = 256,
             .overlap = true},
            {1, 130, 17, 200}, /*full=*/false);
  // The backward: ragged S (not a multiple of the key or query tiles), D 64
  // and 128, grouped-query heads (dK, dV summed over the group).
  auto fa_bwd = [&](std::string name, FlashAttentionBackwardConfig c) {
    for (bool causal : {false, true}) {
      FlashAttentionBackwardConfig cc = c;
      cc.causal = causal;
      cases.push_back(
          {std::string("flash_attention_bwd_") +
               (causal ? "causal_" : "full_") + name,
           [cc] { return FlashAttentionBackwardWorkload(cc, 21); }});
    }
  };
  fa_bwd("d64_ragged", {.B = 2, .S = 100, .H = 1, .D = 64});
  fa_bwd("d128_ragged", {.B = 1, .S = 100, .H = 2, .D = 128});
  fa_bwd("gqa_d64_ragged", {.B = 1, .S = 150, .H = 4, .D = 64, .heads_kv = 2});
  // The forward's O and LSE feed the backward.
  for (bool causal : {false, true}) {
    FlashAttentionConfig f{
        .B = 1, .S = 100, .H = 2, .D = 64, .heads_kv = 1, .causal = causal};
    cases.push_back({std::string("flash_attention_fwd_bwd_") +
                         (causal ? "causal" : "full") + "_mqa_d64_ragged",
                     [f] {
                       return FlashAttentionForwardBackwardWorkload(
                           f, BackwardOf(f), 22);
                     }});
  }
  cases.push_back(
      {"rmsnorm_f16", [] { return RmsNormWorkload({.M = 64, .N = 256}, 15); }});
  cases.push_back({"rmsnorm_bf16_ragged_chunks", [] {
                     return RmsNormWorkload(
                         {.M = 37, .N = 1000, .dtype = bf16, .block_n = 256},
                         15);
                   }});
  cases.push_back(
      {"softmax_f16", [] { return SoftmaxWorkload({.M = 64, .N = 256}, 16); }});
  cases.push_back({"softmax_bf16_ragged_chunks", [] {
                     return SoftmaxWorkload(
                         {.M = 37, .N = 1000, .dtype = bf16, .block_n = 256},
                         16);
                   }});
  // Whole ragged rows in one masked chunk (the default tile).
  cases.push_back({"rmsnorm_bf16_residual_ragged_row", [] {
                     return RmsNormWorkload(
                         {.M = 37, .N = 1000, .dtype = bf16, .residual = true},
                         17);
                   }});
  cases.push_back({"softmax_f16_residual_ragged_row", [] {
                     return SoftmaxWorkload(
                         {.M = 37, .N = 1000, .residual = true}, 18);
                   }});
  cases.push_back({"layernorm_f16",
                   [] { return LayerNormWorkload({.M = 64, .N = 256}, 19); }});
  cases.push_back({"layernorm_bf16_residual_ragged_chunks", [] {
                     return LayerNormWorkload({.M = 37,
                                               .N = 1000,
                                               .dtype = bf16,
                                               .residual = true,
                                               .block_n = 256},
                                              20);
                   }});
  cases.push_back({"layernorm_f16_residual_ragged_row", [] {
                     return LayerNormWorkload(
                         {.M = 37, .N = 1000, .residual = true}, 21);
                   }});
  // Persistent grids (--grid): 10 row tiles of 4 over 3 blocks, so a
  // block's last tile lies past M (masked); W once per block, in registers,
  // in shared memory, and with the next tile prefetched.
  cases.push_back({"rmsnorm_bf16_residual_grid_w_shared_prefetch", [] {
                     return RmsNormWorkload({.M = 37,
                                             .N = 1000,
                                             .dtype = bf16,
                                             .residual = true,
                                             .block_m = 4,
                                             .grid = 3,
                                             .prefetch = true,
                                             .w_shared = true},
                                            23);
                   }});
  cases.push_back(
      {"rmsnorm_f16_grid_keep_dtype", [] {
         return RmsNormWorkload(
             {.M = 37, .N = 1000, .block_m = 4, .grid = 3, .keep_dtype = true},
             24);
       }});
  cases.push_back({"rmsnorm_f16_grid_ragged_chunks", [] {
                     return RmsNormWorkload(
                         {.M = 37, .N = 1000, .block_n = 256, .grid = 2}, 25);
                   }});
  cases.push_back(
      {"softmax_f16_residual_grid", [] {
         return SoftmaxWorkload(
             {.M = 37, .N = 1000, .residual = true, .block_m = 4, .grid = 3},
             26);
       }});
  cases.push_back(
      {"layernorm_bf16_grid", [] {
         return LayerNormWorkload(
             {.M = 37, .N = 1000, .dtype = bf16, .block_m = 4, .grid = 3}, 27);
       }});
  cases.push_back({"layernorm_f16_residual_grid_wb_shared", [] {
                     return LayerNormWorkload({.M = 37,
                                               .N = 1000,
                                               .residual = true,
                                               .block_m = 4,
                                               .grid = 3,
                                               .wb_shared = true},
                                              29);
                   }});
  cases.push_back({"layernorm_f16_grid_ragged_chunks", [] {
                     return LayerNormWorkload(
                         {.M = 37, .N = 1000, .block_n = 256, .grid = 2}, 28);
                   }});
  // Paged split-KV decode at the ragged lengths (0: zeros out): both page
  // sizes, a page larger than the step, one to five splits, grouped (4 and 8
  // heads per kv head), multi-head and multi-query heads, speculative query
  // tokens, bf16 and an fp8 cache.
  auto decode = [&](std::string name, DecodeAttentionConfig c) {
    cases.push_back(
        {"decode_attention_" + name, [c] {
           return DecodeAttentionWorkload(c, {0, 1, 15, 16, 17, 300, 1000}, 29);
         }});
  };
  decode("gqa4_p16_s1", {.H = 8, .heads_kv = 2, .D = 64});
  decode("gqa4_d128_p64_s3",
         {.H = 8, .heads_kv = 2, .D = 128, .page_size = 64, .splits = 3});
  decode("gqa8_p16_s4", {.H = 16, .heads_kv = 2, .D = 64, .splits = 4});
  decode("mha_bf16_p16_s2", {.H = 2,
                             .heads_kv = 2,
                             .D = 64,
                             .splits = 2,
                             .dtype = bf16,
                             .kv_dtype = bf16});
  decode("mqa_q3_p16_s5",
         {.q_len = 3, .H = 4, .heads_kv = 1, .D = 64, .splits = 5});
  decode("gqa4_p64_bn32_s2", {.H = 8,
                              .heads_kv = 2,
                              .D = 64,
                              .page_size = 64,
                              .splits = 2,
                              .block_n = 32});
  decode("gqa4_fp8_p16_s2",
         {.H = 8, .heads_kv = 2, .D = 64, .splits = 2, .kv_dtype = fp8_e4m3});
  // MLA decode: one latent head of 576 columns (values its first 512), 64
  // query heads, both page sizes, at the ragged lengths.
  for (int page : {64, 16}) {
    cases.push_back({"mla_decode_h64_p" + std::to_string(page), [page] {
                       return MlaDecodeWorkload({.H = 64, .page_size = page},
                                                {0, 1, 15, 16, 17, 300, 1000},
                                                31);
                     }});
  }
  // The sm_90a wgmma tile: one warpgroup, O's columns in two blocks; 32
  // keys a step (half a 64-row page, two 16-row pages) so that sm_80 holds
  // it too.
  for (int page : {64, 16}) {
    cases.push_back({"mla_decode_h64_vsplit2_p" + std::to_string(page), [page] {
                       return MlaDecodeWorkload({.H = 64,
                                                 .page_size = page,
                                                 .block_n = 32,
                                                 .threads = 128,
                                                 .v_split = 2},
                                                {0, 1, 15, 64, 65, 300, 1000},
                                                37);
                     }});
  }
  // Split-KV: key ranges per block, then decode_attention's combine (a
  // split with no key of a short sequence: -inf / zeros).
  cases.push_back({"mla_decode_h64_vsplit2_s3_p64", [] {
                     return MlaDecodeWorkload({.H = 64,
                                               .block_n = 32,
                                               .threads = 128,
                                               .v_split = 2,
                                               .splits = 3},
                                              {0, 1, 15, 64, 65, 300, 1000},
                                              41);
                   }});
  cases.push_back({"mla_decode_h64_s4_p16", [] {
                     return MlaDecodeWorkload(
                         {.H = 64, .page_size = 16, .splits = 4},
                         {0, 1, 15, 64, 65, 300, 1000}, 43);
                   }});
  // w4a16: int4 weights, a scale per 128 of K, swapped operands; 16 x 64
  // (M = 1, 5), 64 x 64 (M = 33) and 128 x 64 over two row tiles (M =
  // 130), ragged N and K (K % 8 = 4, 1).
  for (auto [m, n, k] : std::array<std::array<int, 3>, 4>{
           {{1, 72, 300}, {5, 130, 257}, {33, 64, 128}, {130, 100, 388}}}) {
    cases.push_back({"w4a16_gemm_" + std::to_string(m) + "x" +
                         std::to_string(n) + "x" + std::to_string(k),
                     [m, n, k] {
                       return W4A16GemmWorkload({.M = m, .N = n, .K = k}, 47);
                     }});
  }
  // The first form (W through a shared B tile, --swap-ab=0).
  cases.push_back({"w4a16_gemm_legacy_17x130x260", [] {
                     return W4A16GemmWorkload({.M = 17,
                                               .N = 130,
                                               .K = 260,
                                               .tile = LegacyW4A16Tile(17),
                                               .default_tile = false},
                                              47);
                   }});
  return cases;
}

}  // namespace tessel::samples
