// samples/layernorm: LayerNorm over rows (layernorm.h).
//
//   layernorm --size small --backend=cpu --check
//   layernorm --bench --size=4096x8192 --dtype=bf16
#include <string>
#include <vector>

#include "samples/layernorm.h"
#include "samples/row_params.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|f32 (default f16)\n"
    "  --eps=X              (default 1e-5)\n"
    "  --residual           LayerNorm(X + R)\n"
    "  --block-m, --block-n, --threads\n"
    "  --grid=N             N blocks looping over the row tiles (default 0:\n"
    "                       one block per tile)\n"
    "  --wb-shared          with --grid: W and B in shared memory, read per\n"
    "                       row tile\n"
    "  dims: MxN\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  LayerNormConfig base;
  SAMPLES_RETURN_IF_ERROR(ReadEpsFlag(flags, base.eps));
  SAMPLES_ASSIGN_OR_RETURN(base.wb_shared, flags.Bool("wb-shared", false));
  SAMPLES_ASSIGN_OR_RETURN(std::vector<LayerNormConfig> configs,
                           RowConfigs(args, flags, base));
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
