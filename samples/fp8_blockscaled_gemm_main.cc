// samples/fp8_blockscaled_gemm: fp8 e4m3 GEMM with 1x128 / 128x128 scales
// promoted into f32 every 128 of K (fp8_blockscaled_gemm.h), checked against
// float64 and timed.
//
//   fp8_blockscaled_gemm --size small --backend=cpu --check   # ragged M, N
//   fp8_blockscaled_gemm --bench --size bench   # 4096x7168x16384, 8192^3
//   fp8_blockscaled_gemm --check --size=1000x1500x512
#include <string>
#include <vector>

#include "samples/fp8_blockscaled_gemm.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  dims: MxNxK (K a multiple of 128)\n"
    "  --block-m, --block-n, --stages, --threads, --panel  the tile\n"
    "                       (default 128x128, 6 stages, 256 threads)\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  Fp8BlockScaledGemmConfig base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads},
                                      {"panel", &base.panel}}));
  auto with = [&base](int m, int n, int k) {
    Fp8BlockScaledGemmConfig c = base;
    c.M = m, c.N = n, c.K = k;
    return c;
  };
  std::vector<Fp8BlockScaledGemmConfig> configs;
  if (args.size == "small") {
    // Ragged M and N (rows and columns past the tensor, sa's padded rows),
    // one and several K blocks, several output tiles in both directions.
    configs = {with(128, 128, 128), with(200, 136, 256), with(257, 300, 384),
               with(61, 7, 128)};
  } else if (args.size == "bench") {
    configs = {with(4096, 7168, 16384), with(8192, 8192, 8192)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N", "K"}));
    configs = {with(dims["M"], dims["N"], dims["K"])};
  }
  return WorkloadsFor(configs, Fp8BlockScaledGemmWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "fp8_blockscaled_gemm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
