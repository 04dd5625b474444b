// samples/fp8_blockscaled_gemm: fp8 e4m3 GEMM with 1x128 / 128x128 scales
// promoted into f32 every 128 of K (fp8_blockscaled_gemm.h), checked against
// float64 and timed.
//
//   fp8_blockscaled_gemm --size small --backend=cpu --check   # ragged M, N
//   fp8_blockscaled_gemm --bench --size bench   # + grouped 8 x 4096 rows
//   fp8_blockscaled_gemm --check --size=1000x1500x512
//   fp8_blockscaled_gemm --check --group-rows=100,0,300 --size=512x256
//   fp8_blockscaled_gemm --bench --size bench --cluster=2   # TMA multicast
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "samples/fp8_blockscaled_gemm.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  dims: MxNxK (K a multiple of 128); with --group-rows NxK\n"
    "  --group-rows=R1,R2,...  the grouped contiguous kernel (MoE prefill):\n"
    "                       group g has Rg rows (0 allowed), each group\n"
    "                       padded to block_m rows, B [groups, N, K]\n"
    "  --block-m, --block-n, --stages, --threads, --panel  the tile\n"
    "                       (default 128x128, 6 stages, 256 threads)\n"
    "  --cluster=1|2        sm_90a: blocks in pairs that share an operand\n"
    "                       tile, each loading half of it for both (TMA\n"
    "                       multicast); dense pairs along M, grouped along N\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  Fp8BlockScaledGemmConfig base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads},
                                      {"panel", &base.panel},
                                      {"cluster", &base.cluster}}));
  auto with = [&base](int m, int n, int k) {
    Fp8BlockScaledGemmConfig c = base;
    c.M = m, c.N = n, c.K = k;
    return c;
  };
  // Each config with its group rows (empty: the dense kernel).
  std::vector<std::pair<Fp8BlockScaledGemmConfig, std::vector<int>>> runs;
  if (flags.Has("group-rows")) {
    std::vector<int> rows;
    for (absl::string_view r :
         absl::StrSplit(flags.String("group-rows", ""), ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(r, &v) || v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--group-rows: \"", r, "\" is not a row count (0 or more)"));
      }
      rows.push_back(v);
    }
    std::map<std::string, int64_t> dims = {{"N", 4096}, {"K", 7168}};
    if (args.size != "small" && args.size != "bench") {
      SAMPLES_ASSIGN_OR_RETURN(dims, ParseDims(args.size, {"N", "K"}));
    }
    runs = {{with(0, dims["N"], dims["K"]), rows}};
  } else if (args.size == "small") {
    // Ragged M and N (rows and columns past the tensor, sa's padded rows),
    // one and several K blocks, several output tiles in both directions;
    // grouped with ragged and empty groups.
    for (auto [m, n, k] : {std::tuple{128, 128, 128},
                           {200, 136, 256},
                           {257, 300, 384},
                           {61, 7, 128}}) {
      runs.push_back({with(m, n, k), {}});
    }
    runs.push_back({with(0, 200, 256), {100, 0, 257, 31}});
  } else if (args.size == "bench") {
    // issue 46's shapes: DeepSeek-V3's 4096x7168x16384, 8192^3, and the
    // grouped contiguous MoE prefill of 8 experts x 4096 rows.
    runs = {{with(4096, 7168, 16384), {}},
            {with(8192, 8192, 8192), {}},
            {with(0, 4096, 7168), std::vector<int>(8, 4096)}};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N", "K"}));
    runs = {{with(dims["M"], dims["N"], dims["K"]), {}}};
  }
  std::vector<Workload> out;
  for (const auto& [c, rows] : runs) {
    SAMPLES_ASSIGN_OR_RETURN(Workload w,
                             Fp8BlockScaledGemmWorkload(c, args.seed, rows));
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "fp8_blockscaled_gemm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
