// samples/flash_attention: flash attention forward (flash_attention.h) and
// backward (flash_attention_bwd.h), causal and full, grouped-query heads.
//
//   flash_attention --size small --backend=cpu --check
//   flash_attention --bench --size=8x4096x16x128 --causal=true
//   flash_attention --bench --pass=fwd+bwd --size=8x4096x32x128 --heads-kv=8
//   flash_attention --tune --causal=true   # pick the tile, then bench it
//   flash_attention --varlen=1,17,300 --size=16x128 --backend=gpu --check
//   flash_attention --varlen=bench --bench   # 8 sequences, 32768 tokens
//   flash_attention --varlen=0,1,17,300 --pass=fwd+bwd --backend=cpu --check
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/flash_attention.h"
#include "samples/flash_attention_bwd.h"
#include "samples/flash_attention_varlen.h"
#include "samples/flash_attention_varlen_bwd.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"
#include "samples/tune_workload.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --causal=true|false|both   (default both)\n"
    "  --pass=fwd|bwd|fwd+bwd     (default fwd): the backward is dQ, dK, dV\n"
    "                       from the forward's O and log-sum-exp\n"
    "  --heads-kv=N         key / value heads (grouped-query; N divides H;\n"
    "                       default H)\n"
    "  --lse=true|false     the forward also writes the log-sum-exp\n"
    "  --block-m, --block-n, --stages, --threads\n"
    "  --bwd-block-m, --bwd-block-n, --bwd-stages, --bwd-threads  the\n"
    "                       backward's tile (default: the device's)\n"
    "  --bwd-dq-first=true|false  the backward's dQ gemm before dV's and dK's\n"
    "  --bwd-dq-registers=true|false  the backward adds dQ by atomics from\n"
    "                       registers, not through shared memory (D64 tile)\n"
    "  --bwd-mask-diagonal=true|false  the causal backward masks only the\n"
    "                       steps that cross the diagonal\n"
    "  --bwd-dq-pad=N       f32 columns of padding per row of the backward's\n"
    "                       dQ tile in shared memory (fewer bank conflicts)\n"
    "  --bwd-overlap=true|false  the backward's step as order / stage lists:\n"
    "                       each wgmma waited for only where needed\n"
    "                       (the sm_90 tile defaults to dq-pad 4 at D128,\n"
    "                       8 at D64, overlap, mask-diagonal, dq-bulk)\n"
    "  --bwd-dv-early=true|false  with --bwd-overlap: dV's gemm issued before\n"
    "                       dS^T's math, which runs under it\n"
    "  --bwd-across-barriers=true|false  sm_90a: the backward's wgmma\n"
    "                       groups stay in flight across its barriers\n"
    "                       (PassConfig::wgmma_across_barriers; default:\n"
    "                       on with dv-early for the sm_90 causal D128 tile)\n"
    "  --bwd-longest-first=true|false  causal: the backward's longest key\n"
    "                       tiles launched first over groups of heads\n"
    "                       (default true; false: within each head)\n"
    "  --bwd-dq-bulk=true|false  sm_90a: the backward adds dQ's shared tile\n"
    "                       to global as bulk reductions (one per row, by\n"
    "                       the TMA unit), not vector atomics (default: on\n"
    "                       for the sm_90 tile)\n"
    "  --p-in-registers=true|false  P as a register fragment (default) or\n"
    "                       through shared memory\n"
    "  --overlap=true|false  the forward issues P V of the previous key\n"
    "                       block with Q K^T, under the softmax (Pipelined\n"
    "                       order / stage; FlashAttention-3's overlap;\n"
    "                       default: on for the sm_90 tile at D128)\n"
    "  --align-end=true|false  causal: query tiles aligned to the sequence's\n"
    "                       end, the ragged one first and shortest\n"
    "                       (default: on for the sm_90 tile at D64)\n"
    "  --mask-after=true|false  S = Q K^T overwrites the scores, the\n"
    "                       diagonal / ragged blocks masked after it\n"
    "                       (default: on for the sm_90 tile at D64 causal;\n"
    "                       else the scores start masked)\n"
    "  --gemm-turns=true|false  sm_90a: the consumer warpgroups take turns\n"
    "                       at the gemms (FlashAttention-3's warp\n"
    "                       scheduler barrier; default false)\n"
    "  --varlen=S1,S2,...|bench  variable-length attention (every --pass):\n"
    "                       sequences of these lengths (0 allowed) packed\n"
    "                       along one token axis\n"
    "                       (bench: 8 lengths summing to 32768); dims are\n"
    "                       then HxD or H=..,D=.. (small: H2 D64 and GQA\n"
    "                       H4 Hkv2 D128; bench, the default of\n"
    "                       --varlen=bench: H16 D128)\n"
    "  dims: BxSxHxD, or B=..,S=..,H=..,D=.. (fa3: FlashAttention-3's\n"
    "                       shapes, 16k tokens at S 4k/8k/16k, H16 D128\n"
    "                       and H32 D64)\n";

// The varlen bench: mixed lengths, most of them not multiples of the
// tiles, 32768 tokens in all.
constexpr char kVarlenBench[] = "333,1000,2047,3333,4096,5500,7000,9459";

TuneConfig TileConfig(const FlashAttentionConfig& c) {
  TuneConfig t;
  t.Set("block_m", c.block_m);
  t.Set("block_n", c.block_n);
  t.Set("threads", c.threads);
  t.Set("num_stages", c.num_stages);
  return t;
}

FlashAttentionConfig WithTile(FlashAttentionConfig c, const TuneConfig& t) {
  c.block_m = static_cast<int>(t.Int("block_m", c.block_m));
  c.block_n = static_cast<int>(t.Int("block_n", c.block_n));
  c.threads = static_cast<int>(t.Int("threads", c.threads));
  c.num_stages = static_cast<int>(t.Int("num_stages", c.num_stages));
  return c;
}

// Query tiles of 64 or 128 rows, key tiles of 32 to 128, 4 or 8 warps (at
// least 16 query rows per warp: each warp owns whole rows of P).
TuneSpace FlashTuneSpace(const TuneConfig& pinned) {
  return TuneSpace::Product(
      {PinnedAxis("block_m", {64, 128}, pinned),
       PinnedAxis("block_n", {32, 64, 128}, pinned),
       PinnedAxis("threads", {128, 256}, pinned),
       PinnedAxis("num_stages", {1, 2}, pinned)},
      [pinned](const TuneConfig& t) {
        return pinned.Has("threads") ||
               t.Int("block_m", 0) / (t.Int("threads", 32) / 32) >= 16;
      });
}

// Replaces the tile of each workload's config by the winner of a GPU tune.
absl::Status TuneTiles(std::vector<FlashAttentionConfig>& configs,
                       const TuneOptions& options, uint64_t seed,
                       const Flags& flags) {
  for (FlashAttentionConfig& c : configs) {
    const TuneConfig pinned = PinnedByFlags(flags, TileConfig(c),
                                            {{"block-m", "block_m"},
                                             {"block-n", "block_n"},
                                             {"threads", "threads"},
                                             {"stages", "num_stages"}});
    std::cout << "tuning flash_attention" << (c.causal ? "_causal" : "")
              << " B=" << c.B << " S=" << c.S << " H=" << c.H << " D=" << c.D
              << "\n";
    SAMPLES_ASSIGN_OR_RETURN(Workload w, FlashAttentionWorkload(c, seed));
    SAMPLES_ASSIGN_OR_RETURN(TuneResult r,
                             TuneWorkload(
                                 w, w.kernel, FlashTuneSpace(pinned),
                                 [c](const TuneConfig& t) {
                                   return FlashAttentionProgram(WithTile(c, t));
                                 },
                                 options));
    c = WithTile(c, r.best);
    PrintWinner(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  SAMPLES_ASSIGN_OR_RETURN(
      const std::string causal,
      flags.OneOf("causal", {"true", "false", "both"}, "both", "true"));
  SAMPLES_ASSIGN_OR_RETURN(
      const std::string pass,
      flags.OneOf("pass", {"fwd", "bwd", "fwd+bwd"}, "fwd"));
  if (args.tune && pass != "fwd") {
    return absl::InvalidArgumentError(
        "--tune tunes the forward's tile: use it with --pass=fwd");
  }
  FlashAttentionConfig base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"heads-kv", &base.heads_kv}}));
  SAMPLES_ASSIGN_OR_RETURN(base.lse, flags.Bool("lse", false));
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads}}));
  SAMPLES_ASSIGN_OR_RETURN(base.p_in_registers,
                           flags.Bool("p-in-registers", base.p_in_registers));
  SAMPLES_ASSIGN_OR_RETURN(base.overlap, flags.Bool("overlap", base.overlap));
  SAMPLES_ASSIGN_OR_RETURN(base.align_end,
                           flags.Bool("align-end", base.align_end));
  SAMPLES_ASSIGN_OR_RETURN(base.mask_after,
                           flags.Bool("mask-after", base.mask_after));
  SAMPLES_ASSIGN_OR_RETURN(base.gemm_turns,
                           flags.Bool("gemm-turns", base.gemm_turns));
  // Without tile flags, the device's tile.
  const bool tile_flags = flags.Has("block-m") || flags.Has("block-n") ||
                          flags.Has("stages") || flags.Has("threads");
  auto with = [&](int b, int s, int h, int d) {
    FlashAttentionConfig c = base;
    c.B = b, c.S = s, c.H = h, c.D = d;
    if (args.backend == Backend::kGpu && !tile_flags) {
      const int sm = Target::detect().sm();
      if (!flags.Has("overlap")) c.overlap = DeviceOverlap(c, sm);
      c = WithDeviceTile(c, sm);
    }
    return c;
  };
  FlashAttentionBackwardConfig bwd_tile;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"bwd-dq-pad", &bwd_tile.dq_pad},
                                      {"bwd-block-m", &bwd_tile.block_m},
                                      {"bwd-block-n", &bwd_tile.block_n},
                                      {"bwd-stages", &bwd_tile.num_stages},
                                      {"bwd-threads", &bwd_tile.threads}}));
  const bool bwd_tile_flags =
      flags.Has("bwd-block-m") || flags.Has("bwd-block-n") ||
      flags.Has("bwd-stages") || flags.Has("bwd-threads");
  SAMPLES_ASSIGN_OR_RETURN(bwd_tile.dq_first,
                           flags.Bool("bwd-dq-first", bwd_tile.dq_first));
  // The backward's schedule switches: each one given overrides the device
  // tile's schedule.
  using BwdConfig = FlashAttentionBackwardConfig;
  const std::vector<std::pair<std::string, bool BwdConfig::*>> bwd_switches = {
      {"bwd-dq-registers", &BwdConfig::dq_registers},
      {"bwd-mask-diagonal", &BwdConfig::mask_diagonal_only},
      {"bwd-overlap", &BwdConfig::overlap},
      {"bwd-dv-early", &BwdConfig::dv_early},
      {"bwd-dq-bulk", &BwdConfig::dq_bulk},
      {"bwd-across-barriers", &BwdConfig::across_barriers},
      {"bwd-longest-first", &BwdConfig::longest_first}};
  for (const auto& [flag, field] : bwd_switches) {
    SAMPLES_ASSIGN_OR_RETURN(bwd_tile.*field,
                             flags.Bool(flag, bwd_tile.*field));
  }
  auto backward = [&](const FlashAttentionConfig& c) {
    FlashAttentionBackwardConfig b = BackwardOf(c);
    b.block_m = bwd_tile.block_m, b.block_n = bwd_tile.block_n;
    b.num_stages = bwd_tile.num_stages, b.threads = bwd_tile.threads;
    b.dq_first = bwd_tile.dq_first;
    // The device's tile comes with its schedule; flags given override it.
    if (args.backend == Backend::kGpu && !bwd_tile_flags)
      b = WithDeviceTile(b, Target::detect().sm());
    if (flags.Has("bwd-dq-pad")) b.dq_pad = bwd_tile.dq_pad;
    for (const auto& [flag, field] : bwd_switches) {
      if (flags.Has(flag)) b.*field = bwd_tile.*field;
    }
    return b;
  };
  if (flags.Has("varlen")) {
    if (args.tune) {
      return absl::InvalidArgumentError("--varlen does not take --tune");
    }
    std::string lens = flags.String("varlen", "");
    SAMPLES_ASSIGN_OR_RETURN(
        std::vector<int> seqlens,
        ParseSeqlens(lens == "bench" ? kVarlenBench : lens));
    // --varlen=bench alone: at the bench heads too.
    const std::string size =
        lens == "bench" && !flags.Has("size") ? "bench" : args.size;
    std::vector<FlashAttentionConfig> heads;
    if (size == "small") {
      heads = {with(1, 1, 2, 64)};
      if (!flags.Has("heads-kv")) {
        heads.push_back(with(1, 1, 4, 128));
        heads.back().heads_kv = 2;
      }
    } else if (size == "bench") {
      heads = {with(1, 1, 16, 128)};
    } else {
      SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(size, {"H", "D"}));
      heads = {with(1, 1, dims["H"], dims["D"])};
    }
    std::vector<Workload> out;
    for (const FlashAttentionConfig& h : heads) {
      for (bool is_causal : {false, true}) {
        if (causal == (is_causal ? "false" : "true")) continue;
        FlashAttentionConfig c = h;
        c.causal = is_causal;
        if (pass == "fwd") {
          SAMPLES_ASSIGN_OR_RETURN(
              Workload w, FlashAttentionVarlenWorkload(c, seqlens, args.seed));
          out.push_back(std::move(w));
          continue;
        }
        // The backward (after the forward with fwd+bwd) at the same heads.
        SAMPLES_ASSIGN_OR_RETURN(Workload w,
                                 FlashAttentionVarlenBackwardWorkload(
                                     backward(c), seqlens, args.seed, /*pad=*/0,
                                     pass == "fwd+bwd" ? &c : nullptr));
        out.push_back(std::move(w));
      }
    }
    return out;
  }
  std::vector<FlashAttentionConfig> shapes;
  // --tune alone tunes the bench size.
  const std::string size =
      args.tune && !flags.Has("size") ? "bench" : args.size;
  if (size == "small") {
    // Head dims 64 and 128; a sequence that is not a multiple of the tiles.
    shapes = {with(1, 128, 2, 64), with(1, 128, 1, 128), with(2, 100, 1, 64)};
    // Without --heads-kv, also grouped-query heads.
    if (!flags.Has("heads-kv")) {
      shapes.push_back(with(1, 100, 4, 64));
      shapes.back().heads_kv = 2;
    }
  } else if (size == "bench") {
    shapes = {with(8, 4096, 16, 128), with(8, 4096, 32, 64)};
    // The long sequence, benched beside SDPA (bench/peers.py's
    // default shapes); --tune keeps to the two above (its float64
    // reference of 16384 keys would take minutes).
    if (!args.tune) shapes.push_back(with(2, 16384, 16, 128));
  } else if (size == "fa3") {
    for (auto [h, d] : {std::pair{16, 128}, {32, 64}}) {
      for (auto [b, s] : {std::pair{4, 4096}, {2, 8192}, {1, 16384}})
        shapes.push_back(with(b, s, h, d));
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(size, {"B", "S", "H", "D"}));
    shapes = {with(dims["B"], dims["S"], dims["H"], dims["D"])};
  }
  std::vector<FlashAttentionConfig> configs;
  for (const FlashAttentionConfig& shape : shapes) {
    for (bool is_causal : {false, true}) {
      if (causal == "true" && !is_causal) continue;
      if (causal == "false" && is_causal) continue;
      FlashAttentionConfig c = shape;
      c.causal = is_causal;
      if (args.backend == Backend::kGpu && !tile_flags &&
          DeviceEndAlignedMask(c, Target::detect().sm())) {
        if (!flags.Has("align-end")) c.align_end = true;
        if (!flags.Has("mask-after")) c.mask_after = true;
      }
      configs.push_back(c);
    }
  }
  SAMPLES_ASSIGN_OR_RETURN(TuneOptions tune, TuneOptionsFromFlags(args, flags));
  if (args.tune) {
    SAMPLES_RETURN_IF_ERROR(TuneTiles(configs, tune, args.seed, flags));
  }
  std::vector<Workload> out;
  for (const FlashAttentionConfig& c : configs) {
    if (pass == "fwd") {
      SAMPLES_ASSIGN_OR_RETURN(Workload w,
                               FlashAttentionWorkload(c, args.seed));
      out.push_back(std::move(w));
    } else if (pass == "bwd") {
      SAMPLES_ASSIGN_OR_RETURN(
          Workload w, FlashAttentionBackwardWorkload(backward(c), args.seed));
      out.push_back(std::move(w));
    } else {
      SAMPLES_ASSIGN_OR_RETURN(
          Workload w,
          FlashAttentionForwardBackwardWorkload(c, backward(c), args.seed));
      out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(
      argc, argv,
      {.name = "flash_attention",
       .usage =
           std::string(tessel::samples::kUsage) + tessel::samples::kTuneUsage,
       .make = tessel::samples::Make,
       .tunes = true});
}
