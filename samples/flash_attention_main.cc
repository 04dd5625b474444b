// samples/flash_attention: flash attention forward, causal and full
// (flash_attention.h).
//
//   flash_attention --size small --backend=cpu --check
//   flash_attention --bench --size=8x4096x16x128 --causal=true
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/flash_attention.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --causal=true|false|both   (default both)\n"
    "  --block-m, --block-n, --stages, --threads\n"
    "  --p-in-registers=true|false  P as a register fragment (default) or\n"
    "                       through shared memory\n"
    "  dims: BxSxHxD, or B=..,S=..,H=..,D=..\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const std::string causal = flags.String("causal", "both");
  if (causal != "true" && causal != "false" && causal != "both") {
    return absl::InvalidArgumentError(
        absl::StrCat("--causal=", causal, ": expected true, false or both"));
  }
  FlashAttentionConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.block_m, flags.Int("block-m", base.block_m));
  SAMPLES_ASSIGN_OR_RETURN(base.block_n, flags.Int("block-n", base.block_n));
  SAMPLES_ASSIGN_OR_RETURN(base.num_stages,
                           flags.Int("stages", base.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(base.threads, flags.Int("threads", base.threads));
  SAMPLES_ASSIGN_OR_RETURN(base.p_in_registers,
                           flags.Bool("p-in-registers", base.p_in_registers));
  auto with = [&](int b, int s, int h, int d) {
    FlashAttentionConfig c = base;
    c.B = b, c.S = s, c.H = h, c.D = d;
    return c;
  };
  std::vector<FlashAttentionConfig> shapes;
  if (args.size == "small") {
    // Head dims 64 and 128; a sequence that is not a multiple of the tiles.
    shapes = {with(1, 128, 2, 64), with(1, 128, 1, 128), with(2, 100, 1, 64)};
  } else if (args.size == "bench") {
    shapes = {with(8, 4096, 16, 128)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims,
                             ParseDims(args.size, {"B", "S", "H", "D"}));
    shapes = {with(dims["B"], dims["S"], dims["H"], dims["D"])};
  }
  std::vector<Workload> out;
  for (const FlashAttentionConfig& shape : shapes) {
    for (bool is_causal : {false, true}) {
      if (causal == "true" && !is_causal) continue;
      if (causal == "false" && is_causal) continue;
      FlashAttentionConfig c = shape;
      c.causal = is_causal;
      SAMPLES_ASSIGN_OR_RETURN(Workload w,
                               FlashAttentionWorkload(c, args.seed));
      out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "flash_attention",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
