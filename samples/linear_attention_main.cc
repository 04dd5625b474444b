// samples/linear_attention: the seed's fused-chunk linear attention, forward
// (plain and with explicit mbarriers) and backward (linear_attention.h).
//
//   linear_attention --size small --backend=cpu --check
//   linear_attention --bench --size=8x4096x16x128 --pass=bwd
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "samples/linear_attention.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --pass=fwd|fwd_mbarrier|fwd_chunked|bwd|fwd+bwd|all   (default all)\n"
    "  --chunk, --block-k, --block-v, --threads, --stages (0|1 = serial);\n"
    "    default tiles: block_k = block_v = D, 256 threads when D > 64,\n"
    "    else 128 (64 and 128 threads at D = 128 on GPUs of 99 KB of\n"
    "    shared memory a block: sm_86, sm_89, sm_120)\n"
    "  --bwd-block-k, --bwd-block-v, --bwd-threads, --bwd-stages: the\n"
    "    backward's own tiles (default: the forward's)\n"
    "  --split-bwd=true|false: the backward as two kernels, one per sweep\n"
    "    (default), or the seed's fused kernel\n"
    "  --state-bwd=true|false: fwd+bwd as the forward with its final state\n"
    "    and a one-sweep backward from it (default, with one tile over\n"
    "    D <= 64),\n"
    "    or the backward above\n"
    "  --configs=[PASS/]C:BK:BV:T:S[+BK:BV:T:S],...: a sweep in one process\n"
    "    (chunk, block_k, block_v, threads, stages; after + the backward's;\n"
    "    PASS replaces --pass for the entry); rows are named kernel@entry\n"
    "  dims: BxSxHxD (DK = DV = D), or B=..,S=..,H=..,D=..\n";

absl::Status CheckPass(const std::string& pass) {
  if (pass != "fwd" && pass != "fwd_mbarrier" && pass != "fwd_chunked" &&
      pass != "bwd" && pass != "fwd+bwd" && pass != "all") {
    return absl::InvalidArgumentError(
        absl::StrCat("pass ", pass,
                     ": expected fwd, fwd_mbarrier, fwd_chunked, bwd, fwd+bwd "
                     "or all"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  const std::string pass = flags.String("pass", "all");
  SAMPLES_RETURN_IF_ERROR(CheckPass(pass));
  // Tiles left at 0 are chosen per size by `sized` below.
  LinearAttentionConfig base;
  base.block_k = base.block_v = base.threads = 0;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"chunk", &base.chunk},
                                      {"block-k", &base.block_k},
                                      {"block-v", &base.block_v},
                                      {"threads", &base.threads},
                                      {"stages", &base.num_stages}}));
  LinearAttentionConfig bwd_base = base;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"bwd-block-k", &bwd_base.block_k},
                                      {"bwd-block-v", &bwd_base.block_v},
                                      {"bwd-threads", &bwd_base.threads}}));
  SAMPLES_ASSIGN_OR_RETURN(bwd_base.num_stages,
                           flags.Int("bwd-stages", base.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(bwd_base.split_backward,
                           flags.Bool("split-bwd", bwd_base.split_backward));
  SAMPLES_ASSIGN_OR_RETURN(bwd_base.state_backward,
                           flags.Bool("state-bwd", bwd_base.state_backward));
  // The default tiles: the device's (WithDeviceTile).
  const int sm = args.backend == Backend::kGpu ? Target::detect().sm() : 0;
  auto sized = [sm](LinearAttentionConfig c, int b, int s, int h, int d) {
    c.B = b, c.S = s, c.H = h, c.DK = c.DV = d;
    return WithDeviceTile(c, sm);
  };
  // The tile configs: the flags' one, or a sweep.
  struct Tiles {
    LinearAttentionConfig fwd, bwd;
    std::string name;  // "" without a sweep
    std::string pass;
  };
  std::vector<Tiles> tiles;
  const std::string sweep = flags.String("configs", "");
  if (sweep.empty()) {
    tiles.push_back({base, bwd_base, "", pass});
  } else {
    for (absl::string_view entry : absl::StrSplit(sweep, ',')) {
      std::string entry_pass = pass;
      if (size_t slash = entry.find('/'); slash != entry.npos) {
        entry_pass = std::string(entry.substr(0, slash));
        SAMPLES_RETURN_IF_ERROR(CheckPass(entry_pass));
        entry.remove_prefix(slash + 1);
      }
      std::vector<absl::string_view> halves = absl::StrSplit(entry, '+');
      std::vector<int> v;
      for (size_t i = 0; i < halves.size() && i < 2; ++i) {
        for (absl::string_view n : absl::StrSplit(halves[i], ':')) {
          int x = 0;
          if (!absl::SimpleAtoi(n, &x)) {
            return absl::InvalidArgumentError(
                absl::StrCat("--configs: \"", entry,
                             "\": expected C:BK:BV:T:S[+BK:BV:T:S]"));
          }
          v.push_back(x);
        }
      }
      if (halves.size() > 2 || (v.size() != 5 && v.size() != 9)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--configs: \"", entry, "\": expected C:BK:BV:T:S[+BK:BV:T:S]"));
      }
      Tiles t{base, base, absl::StrCat("@", entry), entry_pass};
      t.fwd.chunk = t.bwd.chunk = v[0];
      t.fwd.block_k = v[1], t.fwd.block_v = v[2], t.fwd.threads = v[3],
      t.fwd.num_stages = v[4];
      const size_t b = v.size() == 9 ? 5 : 1;
      t.bwd.block_k = v[b], t.bwd.block_v = v[b + 1], t.bwd.threads = v[b + 2],
      t.bwd.num_stages = v[b + 3];
      tiles.push_back(std::move(t));
    }
  }
  std::vector<std::array<int, 4>> sizes;  // B, S, H, D
  if (args.size == "small") {
    // Two chunks; and a ragged sequence (S not a multiple of the chunk).
    sizes = {{1, 128, 2, 64}, {2, 100, 1, 64}};
  } else if (args.size == "bench") {
    sizes = {{8, 4096, 16, 128}, {8, 4096, 32, 64}};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims,
                             ParseDims(args.size, {"B", "S", "H", "D"}));
    sizes = {{static_cast<int>(dims["B"]), static_cast<int>(dims["S"]),
              static_cast<int>(dims["H"]), static_cast<int>(dims["D"])}};
  }
  std::vector<Workload> out;
  auto add = [&](absl::StatusOr<Workload> w, const Tiles& t) -> absl::Status {
    if (!w.ok()) return w.status();
    w->kernel += t.name;
    out.push_back(*std::move(w));
    return absl::OkStatus();
  };
  for (const auto& [b, s, h, d] : sizes) {
    for (const Tiles& t : tiles) {
      const std::string& pass = t.pass;
      const LinearAttentionConfig c = sized(t.fwd, b, s, h, d);
      const LinearAttentionConfig cb = sized(t.bwd, b, s, h, d);
      if (pass == "fwd" || pass == "all") {
        SAMPLES_RETURN_IF_ERROR(
            add(LinearAttentionForwardWorkload(c, false, args.seed), t));
      }
      if (pass == "fwd_mbarrier" || pass == "all") {
        SAMPLES_RETURN_IF_ERROR(
            add(LinearAttentionForwardWorkload(c, true, args.seed), t));
      }
      if (pass == "fwd_chunked" || pass == "all") {
        SAMPLES_RETURN_IF_ERROR(
            add(LinearAttentionChunkedForwardWorkload(c, args.seed), t));
      }
      if (pass == "bwd" || pass == "all") {
        SAMPLES_RETURN_IF_ERROR(
            add(LinearAttentionBackwardWorkload(cb, args.seed), t));
      }
      // fla's fwd+bwd peers: timed together (bench, or when asked for).
      if (pass == "fwd+bwd" || (pass == "all" && args.size == "bench")) {
        SAMPLES_RETURN_IF_ERROR(
            add(LinearAttentionForwardBackwardWorkload(c, cb, args.seed), t));
      }
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
