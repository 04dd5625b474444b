// samples/flash_attention_fp8: fp8 (e4m3) flash attention forward with
// per-head descales (flash_attention_fp8.h), V^T from a transpose kernel
// run first; checked against float64 attention of the dequantized inputs.
//
//   flash_attention_fp8 --size small --backend=cpu --check
//   flash_attention_fp8 --check --size=1x1000x2x128 --causal=both
//   flash_attention_fp8 --bench --size bench   # FA3's 16k-token shapes
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/flash_attention_fp8.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  dims: BxSxHxD, or B=..,S=..,H=..,D=.. (D 128 or 256)\n"
    "  --causal=true|false|both   (default both)\n"
    "  --block-m, --block-n, --stages, --threads  the attention's tile\n"
    "                       (default 128x128, 2 stages, 256 threads)\n"
    "  bench: B4 S4096, B2 S8192, B1 S16384 (16k tokens), H16, D128 and\n"
    "         D256\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  SAMPLES_ASSIGN_OR_RETURN(
      const std::string causal,
      flags.OneOf("causal", {"true", "false", "both"}, "both", "true"));
  Fp8FlashAttentionConfig base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"block-m", &base.block_m},
                                      {"block-n", &base.block_n},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads}}));
  auto with = [&base](int b, int s, int h, int d) {
    Fp8FlashAttentionConfig c = base;
    c.B = b, c.S = s, c.H = h, c.D = d;
    return c;
  };
  std::vector<Fp8FlashAttentionConfig> shapes;
  if (args.size == "small") {
    // One whole tile, a ragged sequence over several key blocks and query
    // tiles, two batches at D256.
    shapes = {with(1, 128, 1, 128), with(1, 300, 2, 128), with(2, 200, 1, 256)};
  } else if (args.size == "bench") {
    for (int d : {128, 256}) {
      for (auto [b, s] : {std::pair{4, 4096}, {2, 8192}, {1, 16384}})
        shapes.push_back(with(b, s, 16, d));
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims,
                             ParseDims(args.size, {"B", "S", "H", "D"}));
    shapes = {with(dims["B"], dims["S"], dims["H"], dims["D"])};
  }
  std::vector<Workload> out;
  for (const Fp8FlashAttentionConfig& shape : shapes) {
    for (bool is_causal : {false, true}) {
      if (causal == (is_causal ? "false" : "true")) continue;
      Fp8FlashAttentionConfig c = shape;
      c.causal = is_causal;
      SAMPLES_ASSIGN_OR_RETURN(Workload w,
                               Fp8FlashAttentionWorkload(c, args.seed));
      out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "flash_attention_fp8",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
