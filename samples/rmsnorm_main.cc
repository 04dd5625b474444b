// samples/rmsnorm: RMSNorm over rows (rmsnorm.h).
//
//   rmsnorm --size small --backend=cpu --check
//   rmsnorm --bench --size=4096x8192 --dtype=bf16
#include <string>
#include <vector>

#include "samples/rmsnorm.h"
#include "samples/row_params.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|f32 (default f16)\n"
    "  --eps=X              (default 1e-6)\n"
    "  --block-m, --block-n, --threads\n"
    "  --grid=N             N blocks looping over the row tiles (default 0:\n"
    "                       one block per tile)\n"
    "  --keep-dtype         rows kept in the input dtype in registers\n"
    "  --prefetch           with --grid: load the next row tile while\n"
    "                       this one reduces and stores\n"
    "  --w-shared           with --grid: W in shared memory, read per row\n"
    "  dims: MxN\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  RmsNormConfig base;
  SAMPLES_RETURN_IF_ERROR(ReadEpsFlag(flags, base.eps));
  SAMPLES_ASSIGN_OR_RETURN(base.keep_dtype, flags.Bool("keep-dtype", false));
  SAMPLES_ASSIGN_OR_RETURN(base.prefetch, flags.Bool("prefetch", false));
  SAMPLES_ASSIGN_OR_RETURN(base.w_shared, flags.Bool("w-shared", false));
  SAMPLES_ASSIGN_OR_RETURN(std::vector<RmsNormConfig> configs,
                           RowConfigs(args, flags, base));
  return WorkloadsFor(configs, RmsNormWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "rmsnorm",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
