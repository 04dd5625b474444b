// samples/mla_decode: DeepSeek MLA decode over a paged latent cache
// (mla_decode.h).
//
//   mla_decode --size small --backend=cpu --check   # ragged lengths
//   mla_decode --bench --size bench                 # B64/128, L 4k-32k
//   mla_decode --bench --size=128x8192
#include <string>
#include <vector>

#include "samples/decode_attention_workload.h"
#include "samples/mla_decode.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --lens=L1,L2,...     sequence lengths (0 allowed)\n"
    "  dims: BxL or B=..,L=.. (B sequences of L keys)\n"
    "  --heads=N            query heads (default 128; small: 64)\n"
    "  --page-size=N        rows per cache page (default 64)\n"
    "  --dtype=bf16|f16     (default bf16)\n"
    "  --block-h, --block-n, --stages, --threads  the tile\n"
    "  --v-split=N          blocks per 64 heads, each its d_v / N columns of\n"
    "                       O (2 with --threads=128: wgmma on sm_90a)\n"
    "  --splits=N           blocks per sequence and head block, each a range\n"
    "                       of keys, then a combine kernel (split-KV)\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  MlaDecodeConfig base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"heads", &base.H},
                                      {"page-size", &base.page_size},
                                      {"block-h", &base.block_h},
                                      {"block-n", &base.block_n},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads},
                                      {"v-split", &base.v_split},
                                      {"splits", &base.splits}}));
  SAMPLES_ASSIGN_OR_RETURN(base.dtype, flags.Dtype("dtype", bf16));
  std::vector<std::vector<int>> batches;
  std::vector<MlaDecodeConfig> configs;
  if (flags.Has("lens")) {
    SAMPLES_ASSIGN_OR_RETURN(std::vector<int> lens,
                             ParseLengths(flags.String("lens", "")));
    batches = {lens};
    configs = {base};
  } else if (args.size == "small") {
    // Both page sizes at the ragged lengths, 64 heads (one block of them).
    const std::vector<int> ragged = {0, 1, 15, 16, 17, 300, 1000};
    MlaDecodeConfig c = base;
    if (!flags.Has("heads")) c.H = 64;
    configs = {c, c};
    if (!flags.Has("page-size")) configs[1].page_size = 16;
    batches = {ragged, ragged};
  } else if (args.size == "bench") {
    for (int b : {64, 128}) {
      for (int l : {4096, 8192, 32768}) {
        batches.push_back(std::vector<int>(b, l));
        configs.push_back(base);
      }
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"B", "L"}));
    batches = {std::vector<int>(dims["B"], static_cast<int>(dims["L"]))};
    configs = {base};
  }
  std::vector<Workload> out;
  for (size_t i = 0; i < configs.size(); ++i) {
    SAMPLES_ASSIGN_OR_RETURN(
        Workload w, MlaDecodeWorkload(configs[i], batches[i], args.seed));
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "mla_decode",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
