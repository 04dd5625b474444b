// samples/softmax: row softmax, online over column chunks (softmax.h).
//
//   softmax --size small --backend=cpu --check
//   softmax --bench --size=4096x8192 --dtype=bf16
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "samples/sample_main.h"
#include "samples/softmax.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --dtype=f16|bf16|f32 (default f16)\n"
    ""
    "  --block-m, --block-n, --threads\n"
    "  dims: MxN\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const bool chosen = flags.Has("dtype");
  SoftmaxConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.dtype, flags.Dtype("dtype", f16));

  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"threads", &base.threads}}));
  auto with = [&](int m, int n) {
    SoftmaxConfig c = base;
    c.M = m, c.N = n;
    return c;
  };
  std::vector<SoftmaxConfig> configs;
  if (args.size == "small") {
    // A row in one chunk; and ragged rows over several chunks.
    configs = {with(64, 256), with(37, 1000)};
    if (!flags.Has("block-n")) configs[1].block_n = 256;
    if (!chosen) configs[1].dtype = bf16;
  } else if (args.size == "bench") {
    // The sizes of the table (docs/benchmarks.md).
    configs = {with(4096, 8192), with(16384, 4096), with(8192, 1024)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"M", "N"}));
    configs = {with(dims["M"], dims["N"])};
  }
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
