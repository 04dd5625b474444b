// samples/gemm: C = op(A) op(B) (gemm.h), checked against float64 and timed.
//
//   gemm --size small --backend=cpu --check        # a few configs, seconds
//   gemm --bench --size=4096x4096x4096 --dtype=bf16 --layout=NT
//   gemm --bench --size=8192x8192x8192 --dtype=e4m3 --layout=NT   # fp8
//   gemm --tune --size=4096x4096x4096    # pick the tile, then bench it
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "samples/gemm.h"
#include "samples/gemm_tune.h"
#include "samples/sample_main.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/tune_workload.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|e4m3|e5m2   inputs (default f16; fp8 takes wgmma\n"
    "                       in the NT layout only)\n"
    "  --out-dtype=f16|bf16|f32   output (default: the input dtype, f16\n"
    "                       for fp8)\n"
    "  --layout=NN|NT|TN|TT (default NN; NT: B stored [N, K])\n"
    "  --bias-relu          fused epilogue C = relu(A B + bias[j])\n"
    "  --block-m, --block-n, --block-k, --stages, --threads, --panel\n"
    "  --pingpong=true|false  sm_90a: two consumer warpgroups take turns on\n"
    "                       whole output tiles (PassConfig::\n"
    "                       pingpong_consumers; default false); without\n"
    "                       tile flags the tile is 128x128x64, 6 stages,\n"
    "                       128 threads (PingpongGemmTile)\n"
    "  --tma-store=true|false  sm_90a: C through a shared staging tile and\n"
    "                       TMA stores (default true; false: PassConfig::\n"
    "                       disable_tma_store_epilogue); where the lowering\n"
    "                       cannot, the plain stores\n"
    "  --cluster=1|2        sm_90a: blocks in clusters of two along M that\n"
    "                       share B's tile, each loading half and the TMA\n"
    "                       multicasting it (PassConfig::cluster_size;\n"
    "                       default: the tile table's choice)\n"
    "  --pad-rows=true|false  copy an operand whose rows are not 16 bytes\n"
    "                       apart into padded rows first, so that the TMA\n"
    "                       takes it (default: true on sm_90 and later)\n"
    "  --split-k=N          cut K into N slices: f32 partial sums, then a\n"
    "                       reduce kernel (default: the tile table's choice,\n"
    "                       samples/gemm_tile.cc)\n"
    "  dims: MxNxK\n";

// Replaces each config's tile by the winner of a tune on the GPU.
absl::Status TuneTiles(std::vector<GemmConfig>& configs,
                       const TuneOptions& options, uint64_t seed,
                       const Flags& flags) {
  for (GemmConfig& c : configs) {
    c.tile.split_k = 1;  // the tune space has no K slices
    const TuneConfig pinned = PinnedByFlags(flags, GemmTileConfig(c.tile),
                                            {{"block-m", "block_m"},
                                             {"block-n", "block_n"},
                                             {"block-k", "block_k"},
                                             {"stages", "num_stages"},
                                             {"threads", "threads"},
                                             {"panel", "panel"},
                                             {"pingpong", "pingpong"},
                                             {"cluster", "cluster"},
                                             {"persistent", "persistent"}});
    std::cout << "tuning gemm " << c.M << "x" << c.N << "x" << c.K << " "
              << DtypeName(c.in_dtype) << "->" << DtypeName(c.out_dtype) << " "
              << GemmLayoutName(c.layout) << "\n";
    SAMPLES_ASSIGN_OR_RETURN(
        TuneResult r,
        TuneGemm(c, GemmTuneSpace(c, options.compile.target, pinned), options,
                 seed));
    SAMPLES_ASSIGN_OR_RETURN(c.tile, GemmTileFromConfig(r.best, c.tile));
    PrintWinner(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const bool chosen =
      flags.Has("dtype") || flags.Has("out-dtype") || flags.Has("layout");
  GemmConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.in_dtype, flags.Dtype("dtype", f16));
  const bool fp8 = base.in_dtype == fp8_e4m3 || base.in_dtype == fp8_e5m2;
  SAMPLES_ASSIGN_OR_RETURN(base.out_dtype,
                           flags.Dtype("out-dtype", fp8 ? f16 : base.in_dtype));
  SAMPLES_ASSIGN_OR_RETURN(base.layout,
                           ParseGemmLayout(flags.String("layout", "NN")));
  SAMPLES_ASSIGN_OR_RETURN(base.bias_relu, flags.Bool("bias-relu", false));
  SAMPLES_ASSIGN_OR_RETURN(const bool pingpong, flags.Bool("pingpong", false));
  SAMPLES_ASSIGN_OR_RETURN(base.tma_store, flags.Bool("tma-store", true));
  const bool pad_flag = flags.Has("pad-rows");
  SAMPLES_ASSIGN_OR_RETURN(const bool pad_rows, flags.Bool("pad-rows", false));
  // The device's best tile for the inputs unless the flags pin one.
  const int sm = args.backend == Backend::kGpu ? Target::detect().sm() : 0;
  int sms = 132;
  if (args.backend == Backend::kGpu) {
    SAMPLES_ASSIGN_OR_RETURN(DeviceInfo info, GetDeviceInfo());
    sms = info.multiprocessors;
  }
  auto tile_for = [&](DataType in, GemmTile& t) {
    t = pingpong ? PingpongGemmTile(sm, in) : DefaultGemmTile(sm, in);
    t.pingpong = pingpong;
    return flags.Ints({{"block-m", &t.block_m},
                       {"block-n", &t.block_n},
                       {"block-k", &t.block_k},
                       {"stages", &t.num_stages},
                       {"threads", &t.threads},
                       {"panel", &t.panel},
                       {"split-k", &t.split_k}});
  };
  SAMPLES_RETURN_IF_ERROR(tile_for(base.in_dtype, base.tile));

  std::vector<GemmConfig> configs;
  // Without tile flags, the device's tile for the shape.
  const bool tile_flags = flags.Has("block-m") || flags.Has("block-n") ||
                          flags.Has("block-k") || flags.Has("stages") ||
                          flags.Has("threads") || flags.Has("panel") ||
                          flags.Has("split-k");
  int cluster = 1;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"cluster", &cluster}}));
  // Also a pass-config switch of every sample (sample_main.cc); the tile
  // carries it so that --tune can pin it or choose it.
  SAMPLES_ASSIGN_OR_RETURN(const bool persistent,
                           flags.Bool("persistent", true));
  auto with = [&](int m, int n, int k) {
    GemmConfig c = base;
    c.M = m, c.N = n, c.K = k;
    if (args.backend == Backend::kGpu && !tile_flags && !pingpong)
      c.tile = DefaultGemmTile(sm, c.in_dtype, m, n, k, sms);
    if (flags.Has("cluster")) c.tile.cluster = cluster;
    if (pad_flag) c.tile.pad_rows = pad_rows;
    c.tile.persistent = persistent;
    return c;
  };
  // --tune alone tunes the bench size.
  const std::string size =
      args.tune && !flags.Has("size") ? "bench" : args.size;
  if (size == "small") {
    if (chosen) {
      configs = {with(200, 136, 88), with(67, 45, 51)};
    } else {
      // Every layout and dtype pairing the sample promises, ragged edges.
      configs = {with(200, 136, 88), with(67, 45, 51)};
      GemmConfig nt = with(96, 160, 72);
      nt.in_dtype = nt.out_dtype = bf16;
      nt.layout = GemmLayout::kNT;
      GemmConfig tn = with(72, 200, 40);
      tn.out_dtype = f32;
      tn.layout = GemmLayout::kTN;
      GemmConfig tt = with(64, 64, 64);
      tt.in_dtype = bf16;
      tt.out_dtype = f32;
      tt.layout = GemmLayout::kTT;
      // fp8 in its tensor-core layout (NT), both kinds.
      GemmConfig e4m3 = with(200, 136, 272);
      e4m3.in_dtype = fp8_e4m3;
      e4m3.layout = GemmLayout::kNT;
      SAMPLES_RETURN_IF_ERROR(tile_for(fp8_e4m3, e4m3.tile));
      GemmConfig e5m2 = e4m3;
      e5m2.in_dtype = fp8_e5m2;
      e5m2.out_dtype = bf16;
      configs.push_back(nt);
      configs.push_back(tn);
      configs.push_back(tt);
      configs.push_back(e4m3);
      configs.push_back(e5m2);
      // K in three slices (4 + 4 + 2 steps of 64), the bias in the reduce.
      GemmConfig split = with(200, 136, 600);
      split.tile.split_k = 3;
      split.bias_relu = true;
      configs.push_back(split);
    }
  } else if (size == "bench") {
    // The sizes issue 6 compares with cuBLAS, f16 and bf16.
    for (int n : {4096, 8192}) {
      configs.push_back(with(n, n, n));
      if (!chosen) {
        GemmConfig b = with(n, n, n);
        b.in_dtype = b.out_dtype = bf16;
        configs.push_back(b);
      }
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(size, {"M", "N", "K"}));
    configs = {with(dims["M"], dims["N"], dims["K"])};
  }
  SAMPLES_ASSIGN_OR_RETURN(TuneOptions tune, TuneOptionsFromFlags(args, flags));
  if (args.tune) {
    SAMPLES_RETURN_IF_ERROR(TuneTiles(configs, tune, args.seed, flags));
  }
  return WorkloadsFor(configs, GemmWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(
      argc, argv,
      {.name = "gemm",
       .usage =
           std::string(tessel::samples::kUsage) + tessel::samples::kTuneUsage,
       .make = tessel::samples::Make,
       .tunes = true});
}
