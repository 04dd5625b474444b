// samples/linear_attention: the seed's fused-chunk linear attention, forward
// (plain and with explicit mbarriers) and backward (linear_attention.h).
//
//   linear_attention --size small --backend=cpu --check
//   linear_attention --bench --size=8x4096x16x128 --pass=bwd
#include <string>

#include <vector>
#include "absl/strings/str_cat.h"

#include "samples/linear_attention.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --pass=fwd|fwd_mbarrier|bwd|fwd+bwd|all   (default all)\n"
    "  --chunk, --block-k, --block-v, --threads, --stages (0|1 = serial)\n"
    "  dims: BxSxHxD (DK = DV = D), or B=..,S=..,H=..,D=..\n";

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const std::string pass = flags.String("pass", "all");
  if (pass != "fwd" && pass != "fwd_mbarrier" && pass != "bwd" &&
      pass != "fwd+bwd" && pass != "all") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pass=", pass, ": expected fwd, fwd_mbarrier, bwd, fwd+bwd or all"));
  }
  LinearAttentionConfig base;
  SAMPLES_ASSIGN_OR_RETURN(base.chunk, flags.Int("chunk", base.chunk));
  SAMPLES_ASSIGN_OR_RETURN(base.block_k, flags.Int("block-k", base.block_k));
  SAMPLES_ASSIGN_OR_RETURN(base.block_v, flags.Int("block-v", base.block_v));
  SAMPLES_ASSIGN_OR_RETURN(base.threads, flags.Int("threads", base.threads));
  SAMPLES_ASSIGN_OR_RETURN(base.num_stages,
                           flags.Int("stages", base.num_stages));
  auto with = [&](int b, int s, int h, int d) {
    LinearAttentionConfig c = base;
    c.B = b, c.S = s, c.H = h, c.DK = c.DV = d;
    return c;
  };
  std::vector<LinearAttentionConfig> configs;
  if (args.size == "small") {
    // Two chunks; and a ragged sequence (S not a multiple of the chunk).
    configs = {with(1, 128, 2, 64), with(2, 100, 1, 64)};
  } else if (args.size == "bench") {
    configs = {with(8, 4096, 16, 128), with(8, 4096, 32, 64)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims,
                             ParseDims(args.size, {"B", "S", "H", "D"}));
    configs = {with(dims["B"], dims["S"], dims["H"], dims["D"])};
  }
  std::vector<Workload> out;
  for (const LinearAttentionConfig& c : configs) {
    if (pass == "fwd" || pass == "all") {
      SAMPLES_ASSIGN_OR_RETURN(
          Workload w, LinearAttentionForwardWorkload(c, false, args.seed));
      out.push_back(std::move(w));
    }
    if (pass == "fwd_mbarrier" || pass == "all") {
      SAMPLES_ASSIGN_OR_RETURN(
          Workload w, LinearAttentionForwardWorkload(c, true, args.seed));
      out.push_back(std::move(w));
    }
    if (pass == "bwd" || pass == "all") {
      SAMPLES_ASSIGN_OR_RETURN(Workload w,
                               LinearAttentionBackwardWorkload(c, args.seed));
      out.push_back(std::move(w));
    }
    // fla's fwd+bwd peers: timed together (bench, or when asked for).
    if (pass == "fwd+bwd" || (pass == "all" && args.size == "bench")) {
      SAMPLES_ASSIGN_OR_RETURN(
          Workload w, LinearAttentionForwardBackwardWorkload(c, args.seed));
      out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(argc, argv,
                                     {.name = "linear_attention",
                                      .usage = tessel::samples::kUsage,
                                      .make = tessel::samples::Make});
}
