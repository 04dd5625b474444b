// samples/splitk_gemm: split-K GEMM with atomic_add into f32 (splitk_gemm.h).
//
//   splitk_gemm --size small --backend=cpu --check
//   splitk_gemm --bench --size=1024x1024x16384 --split-k=8
#include <string>
#include <vector>

#include "samples/sample_main.h"
#include "samples/splitk_gemm.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16     inputs (default f16); C is f32\n"
    "  --split-k=N          K slices, one per grid z (default 4)\n"
    "  --block-m, --block-n, --block-k, --stages, --threads\n"
    "  dims: MxNxK\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  SplitKConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.in_dtype, flags.Dtype("dtype", f16));
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"split-k", &base.split_k}}));
  GemmTile& t = base.tile;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &t.block_m},
                                      {"block-n", &t.block_n},
                                      {"block-k", &t.block_k},
                                      {"stages", &t.num_stages},
                                      {"threads", &t.threads}}));
  auto with = [&](int m, int n, int k) {
    SplitKConfig c = base;
    c.M = m, c.N = n, c.K = k;
    return c;
  };
  std::vector<SplitKConfig> configs;
  if (args.size == "small") {
    configs = {with(128, 96, 256), with(70, 50, 300)};
  } else if (args.size == "bench") {
    SplitKConfig c = with(1024, 1024, 16384);
    if (!flags.Has("split-k")) c.split_k = 8;
    configs = {c};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N", "K"}));
    configs = {with(dims["M"], dims["N"], dims["K"])};
  }
  return WorkloadsFor(configs, SplitKGemmWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "splitk_gemm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
