// samples/grouped_gemm: MoE grouped GEMM, group sizes on the device
// (grouped_gemm.h).
//
//   grouped_gemm --size small --backend=cpu --check
//   grouped_gemm --groups=0,1,130,64,0,300 --size=256x192 --check
//   grouped_gemm --bench --size bench
//   grouped_gemm --bench --experts=64 --mean-rows=128 --size=2048x2048
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/grouped_gemm.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16     inputs and C (default f16); f32 accumulation\n"
    "  --b-k-major=true|false  B [G, N, K] (default) or [G, K, N]\n"
    "  --groups=R0,R1,...   the groups' rows (sizes 0 allowed)\n"
    "  --experts=G --mean-rows=R  G ragged groups of about R rows, a\n"
    "                       quarter of them 0 or 1 (default 8 and 512)\n"
    "  --pad=N              rows after the last group that no group owns\n"
    "  --block-m, --block-n, --block-k, --stages, --threads, --panel\n"
    "  dims: NxK; bench: G8 ~2048 rows N=K=4096, G8 ~128 rows, G64 ~1024\n"
    "  and ~128 rows at N=K=2048 (ragged, some empty)\n";

struct Case {
  GroupedGemmConfig config;
  std::vector<int> rows;
  int pad = 0;
};

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  GroupedGemmConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.in_dtype, flags.Dtype("dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(base.b_k_major, flags.Bool("b-k-major", true));
  const int sm = args.backend == Backend::kGpu ? Target::detect().sm() : 90;
  GemmTile& t = base.tile;
  t = GroupedGemmTile(sm);
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &t.block_m},
                                      {"block-n", &t.block_n},
                                      {"block-k", &t.block_k},
                                      {"stages", &t.num_stages},
                                      {"threads", &t.threads},
                                      {"panel", &t.panel}}));
  int experts = 8, mean = 512, pad = 0;
  SAMPLES_RETURN_IF_ERROR(
      flags.Ints({{"experts", &experts}, {"mean-rows", &mean}, {"pad", &pad}}));
  std::vector<int> rows;
  if (flags.Has("groups")) {
    SAMPLES_ASSIGN_OR_RETURN(rows, ParseGroupRows(flags.String("groups", "")));
  } else if (experts <= 0 || mean <= 0) {
    return absl::InvalidArgumentError(
        "--experts and --mean-rows must be positive");
  } else {
    rows = RaggedGroupRows(experts, mean, /*with_empty=*/true, args.seed);
  }
  auto with = [&](int n, int k, std::vector<int> r, int p) {
    Case c{base, std::move(r), p};
    c.config.N = n, c.config.K = k;
    return c;
  };
  std::vector<Case> cases;
  const bool preset = args.size == "small" || args.size == "bench";
  for (const char* flag : {"groups", "experts", "mean-rows", "pad"}) {
    if (preset && flags.Has(flag)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " sets the groups of a --size=NxK run; --size=",
          args.size, " has its own"));
    }
  }
  if (args.size == "small") {
    // Empty groups first, last and in a row; groups of 1 row, of a whole
    // tile, of a tile and 1, ragged ones; rows of no group after them.
    cases = {with(96, 80, {0, 1, 130, 0, 0, 128, 129, 5, 0}, 3),
             with(300, 72, {64, 0, 257, 1}, 0),
             with(64, 64, RaggedGroupRows(16, 40, true, args.seed), 0)};
  } else if (args.size == "bench") {
    for (auto [g, m, n] : {std::tuple{8, 2048, 4096},
                           {8, 128, 4096},
                           {64, 1024, 2048},
                           {64, 128, 2048}}) {
      cases.push_back(with(n, n, RaggedGroupRows(g, m, true, args.seed), 0));
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"N", "K"}));
    cases = {with(dims["N"], dims["K"], rows, pad)};
  }
  std::vector<Workload> out;
  for (const Case& c : cases) {
    SAMPLES_ASSIGN_OR_RETURN(
        Workload w, GroupedGemmWorkload(c.config, c.rows, args.seed, c.pad));
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "grouped_gemm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
