// The flash backward with the sm_90a tile (WithDeviceTile(c, 90): 128 keys,
// two consumer warpgroups): on the interpreter against the float64
// gradients, and through the sm_90a lowering, where it must take the TMA +
// warp-specialized path with all five gemms on wgmma, and NVRTC. Ragged S
// (333: not a multiple of the tiles nor of 4), D64 and D128, causal and full,
// grouped-query heads. sm_80 and the cp.async path keep the default tile
// (samples_test / samples_compile_test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "samples/attention_grid.h"
#include "samples/execute.h"
#include "samples/flash_attention_bwd.h"
#include "src/runtime/lower.h"
#include "tests/common/count.h"

namespace tessel::samples {
namespace {

// The sm_90 tile with the case's own schedule (WithDeviceTile gives D128
// and D64 their measured one: DeviceScheduleIsTheMeasuredOne checks that).
FlashAttentionBackwardConfig Sm90(FlashAttentionBackwardConfig c) {
  FlashAttentionBackwardConfig t = WithDeviceTile(c, 90);
  t.dq_pad = c.dq_pad, t.overlap = c.overlap;
  t.mask_diagonal_only = c.mask_diagonal_only;
  t.dq_bulk = c.dq_bulk;
  t.dv_early = c.dv_early, t.across_barriers = c.across_barriers;
  return t;
}

TEST(FlashAttentionBackwardSm90Tile, DeviceScheduleIsTheMeasuredOne) {
  const FlashAttentionBackwardConfig d128 = WithDeviceTile(
      FlashAttentionBackwardConfig{.B = 1, .S = 333, .H = 2, .D = 128}, 90);
  EXPECT_EQ(d128.dq_pad, 4);
  EXPECT_TRUE(d128.overlap);
  EXPECT_TRUE(d128.mask_diagonal_only);
  EXPECT_TRUE(d128.dq_bulk);
  const FlashAttentionBackwardConfig d64 = WithDeviceTile(
      FlashAttentionBackwardConfig{.B = 1, .S = 333, .H = 2, .D = 64}, 90);
  EXPECT_EQ(d64.dq_pad, 8);
  EXPECT_TRUE(d64.overlap);
  EXPECT_TRUE(d64.mask_diagonal_only);
  EXPECT_TRUE(d64.dq_bulk);
  const FlashAttentionBackwardConfig first = WithDeviceTile(
      FlashAttentionBackwardConfig{
          .B = 1, .S = 333, .H = 2, .D = 128, .dq_first = true},
      90);
  EXPECT_FALSE(first.overlap);  // the two do not combine
}

std::string Name(const FlashAttentionBackwardConfig& c) {
  return absl::StrCat("B", c.B, " S", c.S, " H", c.H, " Hkv", c.heads_kv, " D",
                      c.D, c.causal ? " causal" : " full");
}

using testing::Count;

TEST(FlashAttentionBackwardSm90Tile, MatchesFloat64Reference) {
  for (FlashAttentionBackwardConfig c : {
           FlashAttentionBackwardConfig{.B = 1, .S = 333, .H = 2, .D = 128},
           {.B = 1, .S = 200, .H = 2, .D = 128, .dq_first = true},
           {.B = 1, .S = 200, .H = 4, .D = 128, .heads_kv = 2, .causal = true},
           {.B = 1, .S = 333, .H = 1, .D = 64, .causal = true},
           {.B = 1, .S = 333, .H = 2, .D = 64, .dq_registers = true},
           {.B = 1, .S = 333, .H = 2, .D = 128, .dq_pad = 4},
           {.B = 1, .S = 200, .H = 2, .D = 64, .causal = true, .dq_pad = 8},
           {.B = 1,
           .S = 333,
           .H = 2,
           .D = 128,
           .causal = true,
           .overlap = true},
           {.B = 1,
           .S = 333,
           .H = 2,
           .D = 64,
           .dq_registers = true,
           .overlap = true},
           {.B = 1,
           .S = 333,
           .H = 2,
           .D = 128,
           .causal = true,
           .mask_diagonal_only = true},
           {.B = 1,
           .S = 333,
           .H = 4,
           .D = 64,
           .heads_kv = 1,
           .causal = true,
           .dq_registers = true,
           .mask_diagonal_only = true},
           // D128's device schedule, grouped heads.
           {.B = 1,
           .S = 333,
           .H = 4,
           .D = 128,
           .heads_kv = 2,
           .causal = true,
           .mask_diagonal_only = true,
           .dq_pad = 4,
           .overlap = true},
       }) {
    c = Sm90(c);
    absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c, 31);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE(Execute(*w, {.backend = Backend::kCpu}).ok()) << Name(c);
    absl::StatusOr<CheckResult> check = CheckOutputs(*w);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_TRUE(check->ok) << Name(c) << "\n" << check->report;
  }
}

TEST(FlashAttentionBackwardSm90Tile, IsWarpSpecializedOnWgmmaAndCompiles) {
  for (FlashAttentionBackwardConfig c : {
           FlashAttentionBackwardConfig{.B = 1, .S = 333, .H = 2, .D = 128},
           {.B = 1, .S = 333, .H = 4, .D = 128, .heads_kv = 2, .causal = true},
           {.B = 1, .S = 333, .H = 2, .D = 64, .causal = true},
           {.B = 2, .S = 200, .H = 4, .D = 64, .heads_kv = 1},
           {.B = 1,
           .S = 333,
           .H = 2,
           .D = 64,
           .causal = true,
           .dq_registers = true,
           .mask_diagonal_only = true},
           {.B = 1, .S = 333, .H = 2, .D = 128, .dq_pad = 4},
           {.B = 1, .S = 333, .H = 2, .D = 64, .dq_pad = 8},
           {.B = 1,
           .S = 333,
           .H = 4,
           .D = 128,
           .heads_kv = 2,
           .dq_pad = 4,
           .overlap = true},
       }) {
    c = Sm90(c);
    absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<runtime::Lowered> l =
        runtime::Lower(p->ir(), {.target = Target::sm90a()});
    ASSERT_TRUE(l.ok()) << l.status();
    const std::string& src = l->generated.source.text;
    // Q, dO (one box per 64 columns), LSE2 and Delta through the TMA.
    EXPECT_EQ(Count(src, "tl::tma_load("), 2 * (c.D / 64) + 2) << Name(c);
    EXPECT_GT(Count(src, "setmaxnreg_inc"), 0) << Name(c);
    EXPECT_EQ(Count(src, "cp_async_commit"), 0) << Name(c);
    EXPECT_EQ(Count(src, "tl::mma_m16n8k16"), 0) << Name(c);
    EXPECT_EQ(Count(src, "tl::wgmma_commit()"), 5) << Name(c);
    absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c, 32);
    ASSERT_TRUE(w.ok()) << w.status();
    absl::StatusOr<std::string> cache = CompileSteps(*w, Target::sm90a());
    EXPECT_TRUE(cache.ok()) << Name(c) << ": " << cache.status();
  }
}

// Commits of wgmma groups that the next statement does not wait for.
int UnwaitedCommits(const std::string& src) {
  const std::string commit = "tl::wgmma_commit();";
  int n = 0;
  for (size_t at = src.find(commit); at != std::string::npos;
       at = src.find(commit, at + 1)) {
    size_t next = src.find_first_not_of(" \n", at + commit.size());
    n += src.compare(next, 14, "tl::wgmma_wait") != 0;
  }
  return n;
}

// dQ's gemm first: it runs beside dV's (A in registers), whose wait retires
// both; else only S^T's gemm runs beside another (dP^T's).
TEST(FlashAttentionBackwardSm90Tile, DqFirstRunsBesideDv) {
  for (bool dq_first : {false, true}) {
    FlashAttentionBackwardConfig c = Sm90({.B = 1,
                                           .S = 256,
                                           .H = 2,
                                           .D = 128,
                                           .causal = true,
                                           .dq_first = dq_first});
    absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<runtime::Lowered> l =
        runtime::Lower(p->ir(), {.target = Target::sm90a()});
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_EQ(UnwaitedCommits(l->generated.source.text), dq_first ? 2 : 1);
  }
}

// S^T's and dP^T's gemms (clear_accum) overwrite their accumulators in
// their first k step (scale-d 0, early-clobber outputs) instead of adding
// to zeroed registers, which made ptxas serialize every wgmma.
TEST(FlashAttentionBackwardSm90Tile, ClearedGemmsOverwriteInTheirFirstStep) {
  FlashAttentionBackwardConfig c = Sm90({.B = 1, .S = 256, .H = 2, .D = 128});
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> l =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(l.ok()) << l.status();
  const std::string& src = l->generated.source.text;
  EXPECT_EQ(Count(src, "\"=&f\"(qkT[0])"), 1);
  EXPECT_EQ(Count(src, "\"=&f\"(dsT[0])"), 1);
  EXPECT_EQ(Count(src, "\"=&f\"(dqT[0])"), 1);
  // dK and dV add up over the steps.
  EXPECT_EQ(Count(src, "\"=&f\"(dk[0])"), 0);
  EXPECT_EQ(Count(src, "\"+f\"(dk[0])"), 2) << "its gemm and wait";
  EXPECT_EQ(Count(src, "e_qkT)] = 0.0f;"), 0) << "qkT is not zeroed";
}

// dq_registers: atomics from dQ's registers, no dq_shared; a clear error
// where dQ is transposed (the D128 tile).
TEST(FlashAttentionBackwardSm90Tile, DqRegistersSkipSharedMemory) {
  FlashAttentionBackwardConfig c =
      Sm90({.B = 1, .S = 256, .H = 2, .D = 64, .dq_registers = true});
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> l =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Count(l->generated.source.text, "dq_shared"), 0);
  EXPECT_GT(Count(l->generated.source.text, "atomic"), 0);
  c = Sm90({.B = 1, .S = 256, .H = 2, .D = 128, .dq_registers = true});
  absl::StatusOr<Program> transposed = FlashAttentionBackwardProgram(c);
  EXPECT_THAT(transposed.status().message(),
              ::testing::HasSubstr("dq_registers needs block_n"));
}

// overlap: dV's and dK's gemms (A in registers) issue back to back and
// retire with one wait, before the barrier in front of dQ's gemm; S^T's
// gemm retires alone (wait<1>) before P^T's exp.
TEST(FlashAttentionBackwardSm90Tile, OverlapSharesDvAndDkWait) {
  FlashAttentionBackwardConfig c =
      Sm90({.B = 1, .S = 256, .H = 2, .D = 128, .overlap = true});
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> l =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(l.ok()) << l.status();
  const std::string& src = l->generated.source.text;
  EXPECT_EQ(Count(src, "tl::wgmma_wait<1>()"), 1);
  const size_t dv = src.find("\"+f\"(dv[0])");
  const size_t dk = src.find("\"+f\"(dk[0])");
  ASSERT_NE(dv, std::string::npos);
  ASSERT_NE(dk, std::string::npos);
  EXPECT_EQ(src.find("tl::wgmma_wait", dv), src.find("tl::wgmma_wait", dk))
      << "no wait between dV's gemm and dK's";
  c.dq_first = true;
  EXPECT_FALSE(FlashAttentionBackwardProgram(c).ok());
}

// dv_early: dV's gemm issues before dS^T's math, and dP^T's wait leaves it
// in flight (wait<1>); dS^T's math follows it. Needs overlap.
TEST(FlashAttentionBackwardSm90Tile, DvEarlyRunsUnderDs) {
  FlashAttentionBackwardConfig c = Sm90(
      {.B = 1, .S = 333, .H = 2, .D = 128, .causal = true, .overlap = true});
  c.dv_early = true;
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> l =
      runtime::Lower(p->ir(), {.target = Target::sm90a()});
  ASSERT_TRUE(l.ok()) << l.status();
  const std::string& src = l->generated.source.text;
  const size_t dv = src.find("\"+f\"(dv[0])");
  ASSERT_NE(dv, std::string::npos);
  const size_t wait = src.find("tl::wgmma_wait", dv);
  EXPECT_EQ(src.compare(wait, 20, "tl::wgmma_wait<1>();"), 0)
      << "dP^T retires alone, dV stays in flight";
  EXPECT_GT(src.find("dsT_cast[", dv), wait) << "dS^T after dV's gemm";
  EXPECT_LT(src.find("dsT_cast[", dv), src.find("\"+f\"(dk[0])"));
  absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c, 32);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<std::string> cache = CompileSteps(*w, Target::sm90a());
  EXPECT_TRUE(cache.ok()) << cache.status();
  c.overlap = false;
  EXPECT_THAT(FlashAttentionBackwardProgram(c).status().message(),
              ::testing::HasSubstr("needs overlap"));
}

// PassConfig::wgmma_across_barriers: the causal D128 device tile (dv_early)
// keeps dK's group (its B, the query tile, only the TMA writes) in flight
// through the barrier before dQ's gemm; without it every group retires
// there. The workload puts the option on the main step; sm_80 and the
// full tile leave it off.
TEST(FlashAttentionBackwardSm90Tile, AcrossBarriersKeepsDkInFlight) {
  const FlashAttentionBackwardConfig c = WithDeviceTile(
      FlashAttentionBackwardConfig{
          .B = 1, .S = 333, .H = 2, .D = 128, .causal = true},
      90);
  ASSERT_TRUE(c.dv_early && c.across_barriers);
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  auto source = [&](bool across) -> std::string {
    absl::StatusOr<runtime::Lowered> l = runtime::Lower(
        p->ir(), {.target = Target::sm90a(),
                  .pass_config = {.bulk_reduce_atomics = true,
                                  .wgmma_across_barriers = across}});
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? l->generated.source.text : "";
  };
  // From dK's gemm to dQ's (the one reading dsT_shared).
  auto between = [](const std::string& src) {
    const size_t dk = src.find("\"+f\"(dk[0])");
    const size_t dq = src.find("wgmma_desc_sw128((dsT_shared_addr", dk);
    EXPECT_NE(dq, std::string::npos);
    return dq == std::string::npos ? "" : src.substr(dk, dq - dk);
  };
  const std::string on = between(source(true)), off = between(source(false));
  EXPECT_EQ(Count(on, "tl::named_barrier_sync("), 1);
  EXPECT_EQ(Count(on, "tl::wgmma_wait<"), 0) << "dK stays in flight";
  EXPECT_EQ(Count(off, "tl::named_barrier_sync("), 1);
  EXPECT_EQ(Count(off, "tl::wgmma_wait<0>();"), 1) << "dK retires";
  absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c, 32);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->steps[w->main_step].pass_config.wgmma_across_barriers);
  absl::StatusOr<std::string> cache = CompileSteps(*w, Target::sm90a());
  EXPECT_TRUE(cache.ok()) << cache.status();
  EXPECT_FALSE(
      WithDeviceTile(
          FlashAttentionBackwardConfig{.B = 1, .S = 333, .H = 2, .D = 128}, 90)
          .across_barriers);
  EXPECT_FALSE(WithDeviceTile(
                   FlashAttentionBackwardConfig{
                       .B = 1, .S = 333, .H = 2, .D = 64, .causal = true},
                   90)
                   .across_barriers);
  EXPECT_FALSE(WithDeviceTile(
                   FlashAttentionBackwardConfig{
                       .B = 1, .S = 333, .H = 2, .D = 128, .causal = true},
                   80)
                   .across_barriers);
}

// The longest-first grid: groups of heads (about 128 blocks) dividing heads
// x batch, the tiles in y; the plain grid where it is off, where a group
// would not divide, and past the grid's y / z limits.
TEST(AttentionGrid, GroupsHeadsWithinTheGridLimits) {
  const AttentionGrid grouped(32, 16, 8, true);
  EXPECT_EQ(grouped.group(), 4);
  EXPECT_EQ(grouped.x(), 4);
  EXPECT_EQ(grouped.y(), 32);
  EXPECT_EQ(grouped.z(), 32);
  const AttentionGrid plain(32, 16, 8, false);
  EXPECT_EQ(plain.group(), 0);
  EXPECT_EQ(plain.x() * plain.y() * plain.z(), 32 * 16 * 8);
  EXPECT_EQ(plain.x(), 32);
  EXPECT_EQ(AttentionGrid(32, 3, 1, true).group(), 3);      // divides 3
  EXPECT_EQ(AttentionGrid(256, 7, 1, true).group(), 1);     // 128 / 256 -> 1
  EXPECT_EQ(AttentionGrid(1, 16, 8, true).group(), 0);      // one tile: plain
  EXPECT_EQ(AttentionGrid(70000, 2, 1, true).group(), 0);   // y limit
  EXPECT_EQ(AttentionGrid(64, 65535, 3, true).group(), 0);  // z limit
  EXPECT_EQ(AttentionGrid(64, 65535, 4, true).group(), 0);  // 131070 in z
  EXPECT_EQ(AttentionGrid(64, 32767, 4, true).group(), 2);  // 65534 in z
}

// dq_bulk: dQ's shared rows reach dQ_acc as bulk reductions (one per row,
// guarded at the ragged end), waited for before the next barrier; no vector
// atomics. Compiles through the workload's pass config; sm_80
// keeps the atomics.
TEST(FlashAttentionBackwardSm90Tile, DqBulkReducesRowsFromSharedMemory) {
  for (FlashAttentionBackwardConfig c : {
           FlashAttentionBackwardConfig{.B = 1,
          .S = 333,
          .H = 2,
          .D = 128,
          .dq_pad = 4,
          .overlap = true},
           {.B = 1,
           .S = 333,
           .H = 4,
           .D = 128,
           .heads_kv = 2,
           .causal = true,
           .mask_diagonal_only = true,
           .dq_pad = 4},
           {.B = 1, .S = 333, .H = 2, .D = 64, .causal = true, .dq_pad = 8},
       }) {
    c = Sm90(c);
    c.dq_bulk = true;
    absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<runtime::Lowered> l =
        runtime::Lower(p->ir(), {.target = Target::sm90a(),
                                 .pass_config = {.bulk_reduce_atomics = true}});
    ASSERT_TRUE(l.ok()) << l.status();
    const std::string& src = l->generated.source.text;
    EXPECT_EQ(Count(src, "tl::bulk_reduce_add_f32("), 1) << Name(c);
    const size_t bulk = src.find("tl::bulk_reduce_add_f32(");
    ASSERT_NE(bulk, std::string::npos);
    const size_t guard = src.rfind("if (", bulk);
    ASSERT_NE(guard, std::string::npos);
    EXPECT_THAT(src.substr(guard, bulk - guard),
                ::testing::ContainsRegex("^if \\([^;]*< 333\\)"))
        << Name(c) << ": the row guard right before";
    EXPECT_THAT(src.substr(bulk, src.find(';', bulk) - bulk),
                ::testing::EndsWith(absl::StrCat(", ", c.D * 4, ")")))
        << Name(c) << ": whole rows";
    // The wait for the TMA's reads comes before the next barrier, not
    // right after the issue.
    const size_t commit = src.find("tl::tma_store_commit();", bulk);
    ASSERT_NE(commit, std::string::npos);
    EXPECT_NE(src.compare(src.find_first_not_of(" \n", commit + 23), 22,
                          "tl::tma_store_wait_read"),
              0)
        << Name(c);
    EXPECT_GT(Count(src,
                    "tl::tma_store_wait_read<0>();\n      "
                    "tl::fence_proxy_async();\n      "
                    "tl::named_barrier_sync("),
              0)
        << Name(c);
    EXPECT_GE(Count(src, "tl::tma_store_wait_read<0>();"),
              Count(src, "tl::named_barrier_sync(") + 1)
        << Name(c) << ": one before every barrier and at the end";
    EXPECT_EQ(Count(src, "atomic_add"), 0) << Name(c);
    absl::StatusOr<Workload> w = FlashAttentionBackwardWorkload(c, 32);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_TRUE(w->steps[w->main_step].pass_config.bulk_reduce_atomics);
    absl::StatusOr<std::string> cache = CompileSteps(*w, Target::sm90a());
    EXPECT_TRUE(cache.ok()) << Name(c) << ": " << cache.status();
  }
  // sm_80's tile.
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(
      {.B = 1, .S = 333, .H = 2, .D = 64, .dq_bulk = true});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> sm80 = runtime::Lower(
      p->ir(),
      {.target = Target::sm80(), .pass_config = {.bulk_reduce_atomics = true}});
  ASSERT_TRUE(sm80.ok()) << sm80.status();
  EXPECT_EQ(Count(sm80->generated.source.text, "bulk_reduce_add"), 0);
  EXPECT_GT(Count(sm80->generated.source.text, "atomic_add_f32x4"), 0);
  FlashAttentionBackwardConfig both = Sm90({.B = 1, .S = 256, .H = 2, .D = 64});
  both.dq_bulk = both.dq_registers = true;
  EXPECT_THAT(FlashAttentionBackwardProgram(both).status().message(),
              ::testing::HasSubstr("does not take dq_registers"));
}

// --tma=false keeps the sm_90a tile on the cp.async path.
TEST(FlashAttentionBackwardSm90Tile, CompilesWithoutTheTma) {
  FlashAttentionBackwardConfig c =
      Sm90({.B = 1, .S = 333, .H = 2, .D = 128, .causal = true});
  absl::StatusOr<Program> p = FlashAttentionBackwardProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<runtime::Lowered> l = runtime::Lower(
      p->ir(),
      {.target = Target::sm90a(), .pass_config = {.disable_tma_lower = true}});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Count(l->generated.source.text, "tl::tma_load("), 0);
  EXPECT_GT(Count(l->generated.source.text, "cp_async_commit"), 0);
  absl::StatusOr<CompiledKernel> k = compile(
      p->ir(),
      {.target = Target::sm90a(), .pass_config = {.disable_tma_lower = true}});
  EXPECT_TRUE(k.ok()) << k.status();
}

}  // namespace
}  // namespace tessel::samples
