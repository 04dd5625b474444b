// samples/rmsnorm: RMSNorm over rows (layernorm.h).
//
//   layernorm --size small --backend=cpu --check
//   layernorm --bench --size=4096x8192 --dtype=bf16
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "samples/layernorm.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|f32 (default f16)\n"
    "  --eps=X              (default 1e-5)\n"
    "  --residual           LayerNorm(X + R)\n"
    "  --block-m, --block-n, --threads\n"
    "  dims: MxN\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const bool chosen = flags.Has("dtype");
  LayerNormConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.dtype, flags.Dtype("dtype", f16));
  if (flags.Has("eps")) {
    std::string eps = flags.String("eps", "");
    if (!absl::SimpleAtod(eps, &base.eps)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--eps=", eps, ": expected a number"));
    }
  }
  SAMPLES_ASSIGN_OR_RETURN(base.residual, flags.Bool("residual", false));
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"threads", &base.threads}}));
  auto with = [&](int m, int n) {
    LayerNormConfig c = base;
    c.M = m, c.N = n;
    return c;
  };
  std::vector<LayerNormConfig> configs;
  if (args.size == "small") {
    // A row in one chunk; ragged rows over several chunks, with a residual.
    configs = {with(64, 256), with(37, 1000)};
    if (!flags.Has("block-n")) configs[1].block_n = 256;
    configs[1].residual = true;
    if (!chosen) configs[1].dtype = bf16;
  } else if (args.size == "bench") {
    // The sizes of the table (docs/benchmarks.md).
    configs = {with(4096, 8192), with(16384, 4096), with(8192, 1024)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N"}));
    configs = {with(dims["M"], dims["N"])};
  }
  return WorkloadsFor(configs, LayerNormWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "layernorm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
