// samples/w4a16_gemm: weight-only int4 GEMM, f16 activations, a scale per
// 128 weights along K (w4a16_gemm.h).
//
//   w4a16_gemm --size small --backend=cpu --check   # ragged M, N, K
//   w4a16_gemm --bench --size bench   # M 1..256, N = K = 8192, 28672x8192
//   w4a16_gemm --bench --size=16x8192x8192
#include <string>
#include <vector>

#include "samples/sample_main.h"
#include "samples/status_macros.h"
#include "samples/w4a16_gemm.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  dims: MxNxK or M=..,N=..,K=.. (C [M, N] = A [M, K] W [N, K]^T)\n"
    "  --block-m, --block-n, --stages, --threads  the tile (default: by M)\n"
    "  --swap-ab=0  the first form (W dequantized into a shared B tile)\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  std::vector<W4A16Config> configs;
  if (args.size == "small") {
    // Ragged everywhere: M = 1 and 17 (small-M path), 130 (two row tiles),
    // N not a multiple of the tile, K not a multiple of 8 or 128.
    configs = {{.M = 1, .N = 72, .K = 300},
               {.M = 17, .N = 130, .K = 260},
               {.M = 130, .N = 100, .K = 388}};
  } else if (args.size == "bench") {
    for (int nk : {0, 1}) {
      for (int m : {1, 16, 64, 256})
        configs.push_back({.M = m, .N = nk ? 28672 : 8192, .K = 8192});
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N", "K"}));
    configs = {{.M = static_cast<int>(dims["M"]),
                .N = static_cast<int>(dims["N"]),
                .K = static_cast<int>(dims["K"])}};
  }
  // The GPU's arch cuts the stages to its shared memory.
  const int sm = args.backend == Backend::kGpu ? Target::detect().sm() : 0;
  for (W4A16Config& c : configs) {
    int swap = 1;
    SAMPLES_RETURN_IF_ERROR(flags.Ints({{"swap-ab", &swap}}));
    W4A16Tile t = swap ? DefaultW4A16Tile(c.M, sm) : LegacyW4A16Tile(c.M, sm);
    SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &t.block_m},
                                        {"block-n", &t.block_n},
                                        {"stages", &t.num_stages},
                                        {"threads", &t.threads}}));
    c.tile = t;
    c.default_tile = false;
  }
  return WorkloadsFor(configs, W4A16GemmWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "w4a16_gemm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
