// samples/softmax: row softmax, online over column chunks (softmax.h).
//
//   softmax --size small --backend=cpu --check
//   softmax --bench --size=4096x8192 --dtype=bf16
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/row_params.h"
#include "samples/sample_main.h"
#include "samples/softmax.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|f32 (default f16)\n"
    ""
    "  --block-m, --block-n, --threads\n"
    "  --grid=N             N blocks looping over the row tiles (default 0:\n"
    "                       one block per tile)\n"
    "  dims: MxN\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  SoftmaxConfig base;
  SAMPLES_ASSIGN_OR_RETURN(std::vector<SoftmaxConfig> configs,
                           RowConfigs(args, flags, base));
  return WorkloadsFor(configs, SoftmaxWorkload, args.seed);
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "softmax",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
