// samples/decode_attention beyond the shared sample cases: zero-length
// sequences give exact zeros, the split count does not change the result,
// bad configs are refused, the split heuristic fills the GPU, on sm_90a
// the page gather is TMA boxes under a producer warp (or, without warp
// specialization, one run of cp.async copies) into tensor-core gemms, and
// the copy ceiling copies with 16-byte vectors;
// mla_decode's split-value tile takes wgmma and the TMA on sm_90a.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "samples/decode_attention.h"
#include "samples/decode_attention_workload.h"
#include "samples/execute.h"
#include "samples/mla_decode.h"

namespace tessel::samples {
namespace {

using ::testing::HasSubstr;

HostTensor RunOnCpu(const DecodeAttentionConfig& c,
                    const std::vector<int>& lens) {
  absl::StatusOr<Workload> w = DecodeAttentionWorkload(c, lens, 5);
  EXPECT_TRUE(w.ok()) << w.status();
  absl::StatusOr<RunResult> run = Execute(*w, {.backend = Backend::kCpu});
  EXPECT_TRUE(run.ok()) << run.status();
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  EXPECT_TRUE(check.ok() && check->ok) << (check.ok() ? check->report : "");
  return w->tensors.at("O");
}

TEST(DecodeAttention, AnEmptySequenceGivesZeros) {
  // Sequence 1 has no keys; with q_len 2, sequence 2's first query token
  // (length 1) sees none either.
  for (int splits : {1, 3}) {
    HostTensor o =
        RunOnCpu({.q_len = 2, .H = 4, .heads_kv = 2, .D = 32, .splits = splits},
                 {20, 0, 1});
    const int64_t row = 4 * 32;  // one query token's heads
    for (int64_t e = 0; e < 2 * row; ++e) {
      ASSERT_EQ(o.get_flat(2 * row + e), 0.0) << "splits " << splits;
    }
    for (int64_t e = 0; e < row; ++e) {
      ASSERT_EQ(o.get_flat(4 * row + e), 0.0) << "splits " << splits;
    }
  }
}

TEST(DecodeAttention, SplitsAgree) {
  const std::vector<int> lens = {1, 200, 33};
  std::vector<double> one =
      RunOnCpu({.H = 8, .heads_kv = 2, .D = 32, .block_n = 16}, lens)
          .to_doubles();
  for (int splits : {2, 7, 13}) {
    std::vector<double> many =
        RunOnCpu(
            {.H = 8, .heads_kv = 2, .D = 32, .splits = splits, .block_n = 16},
            lens)
            .to_doubles();
    ASSERT_EQ(one.size(), many.size());
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_NEAR(one[i], many[i], 2e-3) << "splits " << splits << " at " << i;
    }
  }
}

TEST(DecodeAttention, RejectsBadConfigs) {
  auto message = [](const DecodeAttentionConfig& c) {
    return std::string(DecodeAttentionProgram(c).status().message());
  };
  EXPECT_THAT(message({.H = 4, .heads_kv = 3}),
              HasSubstr("heads_kv=3 must divide H=4"));
  EXPECT_THAT(message({.page_size = 48, .block_n = 64}),
              HasSubstr("a multiple or a divisor of page_size=48"));
  EXPECT_THAT(message({.dtype = f32, .kv_dtype = f32}),
              HasSubstr("must be f16 or bf16"));
  EXPECT_THAT(message({.kv_dtype = bf16}),
              HasSubstr("must be the dtype of Q or fp8_e4m3"));
  EXPECT_THAT(message({.q_len = 4, .H = 32, .heads_kv = 1, .block_m = 64}),
              HasSubstr("must hold the 128 query rows"));
  EXPECT_THAT(std::string(DecodeCombineProgram({}).status().message()),
              HasSubstr("splits >= 2"));
  EXPECT_THAT(ParseLengths("1,x").status().message(), HasSubstr("--lens=1,x"));
  EXPECT_EQ(*ParseLengths("0,1,17"), (std::vector<int>{0, 1, 17}));
  EXPECT_EQ(DecodeAttentionWorkload({}, {}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MlaDecode, RejectsBadConfigs) {
  auto message = [](const MlaDecodeConfig& c) {
    return std::string(MlaDecodeProgram(c).status().message());
  };
  EXPECT_THAT(message({.d_qk = 512, .d_v = 576}),
              HasSubstr("d_v=576 must be at most d_qk=512"));
  EXPECT_THAT(message({.H = 96}), HasSubstr("block_h=64 must divide H=96"));
  EXPECT_THAT(message({.dtype = f32}), HasSubstr("must be bf16 or f16"));
  EXPECT_THAT(message({.threads = 192}), HasSubstr("whole warpgroups"));
  EXPECT_THAT(message({.splits = 0}), HasSubstr("splits=0 must be in"));
  EXPECT_THAT(message({.v_split = 3}),
              HasSubstr("v_split=3 must divide d_v=512 into multiples of 16"));
  EXPECT_EQ(MlaDecodeWorkload({}, {}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DecodeAttention, SplitsGiveWholeWavesOfEqualBlocks) {
  // One sequence of 32k keys (512 steps) over 8 kv heads: 8 blocks unsplit,
  // 264 slots on 132 SMs; 32 splits give 256 blocks of 16 steps (30 gave
  // 29 of 18 and one of 10).
  DecodeAttentionConfig c{
      .B = 1, .H = 32, .heads_kv = 8, .page_size = 16, .max_pages = 2048};
  EXPECT_EQ(DecodeSplits(c, 132), 32);
  EXPECT_EQ(DecodeSplits(c, 66), 16);  // half the SMs: 128 blocks of 32
  c.heads_kv = 32;                     // MHA: 8 splits, 256 blocks of 64 steps
  EXPECT_EQ(DecodeSplits(c, 132), 8);
  c.heads_kv = 8, c.B = 16;  // 128 blocks: two splits, one wave
  EXPECT_EQ(DecodeSplits(c, 132), 2);
  c.B = 128;  // 1024 blocks: four waves unsplit, as short as any split
  EXPECT_EQ(DecodeSplits(c, 132), 1);
  c.B = 64;  // 512 blocks: two waves
  EXPECT_EQ(DecodeSplits(c, 132), 1);
  c.B = 1, c.max_pages = 2;  // one step of keys: nothing to split
  EXPECT_EQ(DecodeSplits(c, 132), 1);
}

TEST(DecodeAttention, Sm90aGathersPagesByTmaUnderAProducerWarp) {
  // Each page of 16 keys is one TMA box per 128-byte atom into its rows of
  // the stage; one warp issues them, so two blocks of 160 threads share an
  // SM. The consumers' loop waits on the stage's barrier, no block-wide one.
  DecodeAttentionConfig c{.B = 4, .H = 32, .heads_kv = 8, .max_pages = 64};
  absl::StatusOr<Program> p = DecodeAttentionProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = Target::sm90a(), .direct_ptx = false});
  ASSERT_TRUE(k.ok()) << k.status();
  std::string s;
  for (const std::string& line : k->schedule()) s += line + "\n";
  EXPECT_THAT(s, HasSubstr("warp-specialized: 32 TMA producer threads, 128 "
                           "consumer threads; tensor maps K_cache_tma box "
                           "[16, 1, 64] swizzle 128, V_cache_tma box "
                           "[16, 1, 64] swizzle 128"));
  EXPECT_EQ(k->threads(), 160);
  const std::string& src = k->source();
  size_t loop = src.find("for (int k_1 = 0;");
  ASSERT_NE(loop, std::string::npos) << src;
  EXPECT_EQ(src.find("__syncthreads", loop), std::string::npos);
  EXPECT_EQ(src.find("tl::cp_async<16>"), std::string::npos);
  // The producer looks the step's page rows up in the block table ahead of
  // its wait for a free stage (the loads fly while it waits); after the
  // wait its TMA issues only read them.
  const size_t wait = src.find("tl::mbarrier_wait_parity(&tma_empty");
  ASSERT_NE(wait, std::string::npos) << src;
  EXPECT_LT(src.find("const int row = "), wait) << src;
  EXPECT_NE(src.find("by, row);", wait), std::string::npos) << src;
  EXPECT_EQ(src.substr(wait, loop - wait).find("block_table["),
            std::string::npos)
      << src;
}

TEST(DecodeAttention, Sm90aGathersPagesByCpAsyncIntoWgmma) {
  // Without warp specialization: the cp.async pipeline.
  DecodeAttentionConfig c{.B = 4, .H = 32, .heads_kv = 8, .max_pages = 64};
  absl::StatusOr<Program> p = DecodeAttentionProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = Target::sm90a(),
                   .pass_config = {.disable_warp_specialized = true},
                   .direct_ptx = false});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source();
  EXPECT_THAT(src, HasSubstr("tl::cp_async<16>"));
  EXPECT_THAT(src, HasSubstr("wgmma.mma_async"));
  // Four pages of 16 keys a step, for K and for V, each one run of copies
  // without a barrier between the pages: the one barrier of the loop is
  // the stage's wait.
  size_t loop = src.find("for (int k = 0;");
  ASSERT_NE(loop, std::string::npos);
  size_t commit = src.find("tl::cp_async_commit();", loop);
  ASSERT_NE(commit, std::string::npos);
  std::string prefetch = src.substr(loop, commit - loop);
  size_t syncs = 0;
  for (size_t at = prefetch.find("__syncthreads"); at != std::string::npos;
       at = prefetch.find("__syncthreads", at + 1)) {
    ++syncs;
  }
  EXPECT_EQ(syncs, 1u) << prefetch;
}

TEST(DecodeAttention, TheCopyCeilingCopies) {
  absl::StatusOr<Workload> w = CopyWorkload(2 * kCopyTile);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok());
  absl::StatusOr<CheckResult> check = CheckOutputs(*w);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok) << check->report;
  EXPECT_EQ(w->bytes, 2.0 * 2 * kCopyTile * 2);
  EXPECT_THAT(std::string(CopyProgram(100).status().message()),
              HasSubstr("must be a positive multiple of 16384"));
  // 16-byte vectors through shared memory, not element by element.
  absl::StatusOr<Program> p = CopyProgram(2 * kCopyTile);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<CompiledKernel> k =
      compile(*p, {.target = Target::sm90a(), .direct_ptx = false});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source(), HasSubstr("reinterpret_cast<const uint4*>(&X["));
}

TEST(MlaDecode, Sm90aSplitValuesTakeWgmmaAndTheTma) {
  // One warpgroup of 64 heads holds half of O: both gemms on wgmma, P in
  // registers (at one split the [64, 512] accumulator needs two
  // warpgroups, which wgmma splits by rows: mma.sync). The key tile's 576
  // columns reach the TMA as nine boxes of one 128-byte atom each, under a
  // producer warp (the grid is not persistent).
  absl::StatusOr<Program> p =
      MlaDecodeProgram({.B = 4, .max_pages = 64, .threads = 128, .v_split = 2});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  std::string s;
  for (const std::string& line : k->schedule()) s += line + "\n";
  EXPECT_THAT(s, HasSubstr("gemm acc_s += Q_shared * KV_shared: wgmma, "
                           "warps 4x1"));
  EXPECT_THAT(s, HasSubstr("gemm acc_o += P_frag * KV_shared: wgmma, "
                           "warps 4x1, warp tile 16x256 (1x32 tiles), 2 k16 "
                           "steps, A registers"));
  EXPECT_THAT(s, HasSubstr("warp-specialized: 32 TMA producer threads, 128 "
                           "consumer threads; tensor maps KV_cache_tma box "
                           "[32, 64] swizzle 128"));
  EXPECT_THAT(s, ::testing::Not(HasSubstr("mma.sync")));
}

}  // namespace
}  // namespace tessel::samples
