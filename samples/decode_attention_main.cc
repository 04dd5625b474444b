// samples/decode_attention: paged-KV split-KV decode attention
// (decode_attention.h) at ragged sequence lengths, grouped-query / multi-
// head / multi-query, f16 / bf16, fp8 caches, speculative query tokens.
//
//   decode_attention --size small --backend=cpu --check
//   decode_attention --lens=0,1,15,16,17,300,1000 --size=H=8,D=128
//       --heads-kv=2 --page-size=64 --splits=3 --check
//   decode_attention --bench --size bench    # the shapes + a copy
//   decode_attention --bench --size=64x4096x32x128 --heads-kv=8
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "samples/decode_attention.h"
#include "samples/decode_attention_workload.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"
#include "tessel/device.h"

namespace tessel::samples {
namespace {

constexpr char kUsage[] =
    "  --lens=L1,L2,...     sequence lengths (0 allowed); dims are then\n"
    "                       HxD or H=..,D=..\n"
    "  dims: BxLxHxD or B=..,L=..,H=..,D=.. (B sequences of L keys)\n"
    "  --shapes=B:L:Hkv,... H32 D128 workloads, B sequences of L keys over\n"
    "                       Hkv heads each (a sweep in one process)\n"
    "  --heads-kv=N         key / value heads (N divides H; default H / 4\n"
    "                       at --size bench's GQA rows, else H)\n"
    "  --q-len=N            query tokens per sequence (default 1)\n"
    "  --page-size=N        keys per cache page (default 16)\n"
    "  --splits=N|auto      blocks per (sequence, kv head); auto: the count\n"
    "                       whose busiest slot (two blocks an SM of the\n"
    "                       device's SMs, 132 on the CPU) runs the fewest\n"
    "                       steps, waves x (steps per split + 2)\n"
    "                       (default auto)\n"
    "  --dtype=f16|bf16     Q and O (default f16)\n"
    "  --kv-dtype=f16|bf16|e4m3  the cache (default: --dtype)\n"
    "  --block-n, --block-m, --stages, --threads  the tile\n"
    "  --copy=true|false    with --bench: also time a 512 MiB copy\n"
    "                       (copy_f16: 16-byte loads, as a device-to-device\n"
    "                       copy), the ceiling the decode rows are a\n"
    "                       fraction of (default true)\n"
    "  --ceiling-gbps=N     a ceiling measured elsewhere in the same call\n"
    "                       (torch's copy from bench/peers.py --only decode,\n"
    "                       read + written): rows also as a fraction of it\n"
    "  --schedule[=ARCH]    print what the scheduler chose for each kernel\n"
    "                       on ARCH (default sm_90a; no GPU needed)\n"
    "  --warp-specialized=false  the cp.async gather instead of the TMA\n"
    "                       producer (sm_90a)\n";

// The bench: f16, H32 D128, GQA 4:1 and MHA, batch 1-128, context
// 1k-32k: a subset whose caches fit the GPU and ~3 minutes.
struct BenchShape {
  int B, L, heads_kv;
};
constexpr BenchShape kBench[] = {
    {1, 32768, 8},  {16, 8192, 8},  {64, 4096, 8},
    {128, 4096, 8}, {16, 32768, 8}, {1, 32768, 32},
    {16, 4096, 32}, {64, 2048, 32}, {128, 1024, 32}};

// --ceiling-gbps: a bandwidth measured elsewhere in the same call (torch's
// device-to-device copy from bench/peers.py --only decode), read + written.
double given_ceiling_gbps = 0;

// Each decode row's KV bandwidth as a fraction of the ceiling: the copy row
// of this run (copy_f16, CopyProgram: 16-byte loads, bytes read + written as
// torch's copy counts them) and, when given, --ceiling-gbps.
std::string CeilingSummary(const std::vector<ResultRow>& rows) {
  double copy_gbps = 0;
  for (const ResultRow& r : rows) {
    if (r.kernel == "copy" && r.run.benched && r.run.ms > 0) {
      copy_gbps = r.bytes / (r.run.ms * 1e6);
    }
  }
  if (copy_gbps <= 0 && given_ceiling_gbps <= 0) return "";
  std::string out = "ceiling (bytes read + written per second):\n";
  if (copy_gbps > 0) {
    absl::StrAppend(&out, absl::StrFormat("  copy: %.0f GB/s (copy_f16 of "
                                          "this run)\n",
                                          copy_gbps));
  }
  if (given_ceiling_gbps > 0) {
    absl::StrAppend(&out, absl::StrFormat("  given: %.0f GB/s "
                                          "(--ceiling-gbps)\n",
                                          given_ceiling_gbps));
  }
  for (const ResultRow& r : rows) {
    if (r.kernel == "copy" || !r.run.benched || r.run.ms <= 0) continue;
    const double gbps = r.bytes / (r.run.ms * 1e6);
    std::string line = absl::StrFormat("  %-40s %s: KV read %.0f GB/s",
                                       r.kernel, r.label.size, gbps);
    if (copy_gbps > 0) {
      absl::StrAppend(
          &line, absl::StrFormat(" = %.1f%% of copy", 100 * gbps / copy_gbps));
    }
    if (given_ceiling_gbps > 0) {
      absl::StrAppend(&line, absl::StrFormat(" = %.1f%% of given",
                                             100 * gbps / given_ceiling_gbps));
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::StatusOr<std::vector<Workload>> Make(const SampleArgs& args,
                                           const Flags& flags) {
  DecodeAttentionConfig base;
  base.heads_kv = 0;
  SAMPLES_RETURN_IF_ERROR(flags.Ints({{"heads-kv", &base.heads_kv},
                                      {"q-len", &base.q_len},
                                      {"page-size", &base.page_size},
                                      {"block-n", &base.block_n},
                                      {"block-m", &base.block_m},
                                      {"stages", &base.num_stages},
                                      {"threads", &base.threads}}));
  SAMPLES_ASSIGN_OR_RETURN(base.dtype, flags.Dtype("dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(base.kv_dtype, flags.Dtype("kv-dtype", base.dtype));
  const std::string splits = flags.String("splits", "auto");
  int fixed_splits = 0;
  if (splits != "auto") {
    SAMPLES_ASSIGN_OR_RETURN(int64_t n, flags.Int("splits", 1));
    if (n < 1 || n > 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat("--splits=", splits, ": expected 1-1024 or auto"));
    }
    fixed_splits = static_cast<int>(n);
  }
  SAMPLES_ASSIGN_OR_RETURN(bool copy, flags.Bool("copy", true));
  if (flags.Has("ceiling-gbps")) {
    SAMPLES_ASSIGN_OR_RETURN(int64_t gbps, flags.Int("ceiling-gbps", 0));
    if (gbps <= 0) {
      return absl::InvalidArgumentError(
          "--ceiling-gbps=N: expected a positive bandwidth in GB/s");
    }
    given_ceiling_gbps = static_cast<double>(gbps);
  }
  // One workload per (config, lengths); splits chosen for the longest, over
  // the device's SMs.
  int sms = 132;
  if (args.backend == Backend::kGpu) {
    SAMPLES_ASSIGN_OR_RETURN(DeviceInfo info, GetDeviceInfo());
    sms = info.multiprocessors;
  }
  std::vector<Workload> out;
  auto add = [&](DecodeAttentionConfig c, const std::vector<int>& lens,
                 int default_splits) -> absl::Status {
    c.B = static_cast<int>(lens.size());
    const int longest = *std::max_element(lens.begin(), lens.end());
    c.max_pages = std::max(1, (longest + c.page_size - 1) / c.page_size);
    c.splits = fixed_splits > 0     ? fixed_splits
               : default_splits > 0 ? default_splits
                                    : DecodeSplits(c, sms);
    SAMPLES_ASSIGN_OR_RETURN(Workload w,
                             DecodeAttentionWorkload(c, lens, args.seed));
    out.push_back(std::move(w));
    return absl::OkStatus();
  };
  const std::vector<int> ragged = {0, 1, 15, 16, 17, 300, 1000};
  if (flags.Has("lens")) {
    SAMPLES_ASSIGN_OR_RETURN(std::vector<int> lens,
                             ParseLengths(flags.String("lens", "")));
    DecodeAttentionConfig c = base;
    if (args.size != "small") {
      SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(args.size, {"H", "D"}));
      c.H = static_cast<int>(dims["H"]), c.D = static_cast<int>(dims["D"]);
    }
    SAMPLES_RETURN_IF_ERROR(add(c, lens, 0));
  } else if (flags.Has("shapes")) {
    // --shapes=B:L:Hkv,... at H32 D128, one workload each (a sweep in one
    // process).
    for (absl::string_view item :
         absl::StrSplit(flags.String("shapes", ""), ',')) {
      std::vector<std::string> parts = absl::StrSplit(item, ':');
      int b = 0, l = 0, hkv = 0;
      if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &b) ||
          !absl::SimpleAtoi(parts[1], &l) ||
          !absl::SimpleAtoi(parts[2], &hkv) || b <= 0 || l < 0 || hkv <= 0 ||
          32 % hkv != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--shapes=", flags.String("shapes", ""), ": expected B:L:Hkv,... ",
            "(Hkv dividing H=32), as 64:4096:8,64:4096:32"));
      }
      DecodeAttentionConfig c = base;
      c.H = 32, c.D = 128, c.heads_kv = hkv;
      SAMPLES_RETURN_IF_ERROR(add(c, std::vector<int>(b, l), 0));
    }
  } else if (args.size == "small") {
    // Every page size, split count, head grouping and dtype at the ragged
    // lengths, small enough for the interpreter.
    auto with = [&](int H, int heads_kv, int D, int page, int split, int q,
                    DataType dtype, DataType kv) {
      DecodeAttentionConfig c = base;
      c.H = H, c.heads_kv = flags.Has("heads-kv") ? base.heads_kv : heads_kv;
      c.D = D, c.q_len = flags.Has("q-len") ? base.q_len : q;
      if (!flags.Has("page-size")) c.page_size = page;
      if (!flags.Has("dtype")) c.dtype = dtype;
      if (!flags.Has("kv-dtype") && !flags.Has("dtype")) c.kv_dtype = kv;
      return add(c, ragged, split);
    };
    SAMPLES_RETURN_IF_ERROR(with(8, 2, 64, 16, 1, 1, f16, f16));
    SAMPLES_RETURN_IF_ERROR(with(8, 2, 128, 64, 3, 1, f16, f16));
    SAMPLES_RETURN_IF_ERROR(with(2, 2, 64, 16, 2, 1, bf16, bf16));
    SAMPLES_RETURN_IF_ERROR(with(4, 1, 64, 16, 4, 3, f16, f16));
    SAMPLES_RETURN_IF_ERROR(with(8, 1, 64, 64, 2, 1, f16, fp8_e4m3));
  } else if (args.size == "bench") {
    for (const BenchShape& s : kBench) {
      DecodeAttentionConfig c = base;
      c.H = 32, c.D = 128;
      if (!flags.Has("heads-kv")) c.heads_kv = s.heads_kv;
      SAMPLES_RETURN_IF_ERROR(add(c, std::vector<int>(s.B, s.L), 0));
    }
  } else {
    SAMPLES_ASSIGN_OR_RETURN(auto dims,
                             ParseDims(args.size, {"B", "L", "H", "D"}));
    DecodeAttentionConfig c = base;
    c.H = static_cast<int>(dims["H"]), c.D = static_cast<int>(dims["D"]);
    SAMPLES_RETURN_IF_ERROR(
        add(c, std::vector<int>(dims["B"], static_cast<int>(dims["L"])), 0));
  }
  if (flags.Has("bench") && copy && args.backend == Backend::kGpu) {
    SAMPLES_ASSIGN_OR_RETURN(Workload w, CopyWorkload(int64_t{256} << 20));
    out.push_back(std::move(w));
  }
  const std::string schedule = flags.String("schedule", "", "sm_90a");
  if (!schedule.empty()) {
    // The scheduler switches (--warp-specialized=false, ...) as the run
    // applies them.
    SAMPLES_ASSIGN_OR_RETURN(const PassConfig switches,
                             PassConfigFromFlags(flags));
    for (const Workload& w : out) {
      for (const Step& step : w.steps) {
        SAMPLES_ASSIGN_OR_RETURN(
            CompiledKernel k,
            compile(step.program, {.target = Target::cuda(schedule),
                                   .pass_config = switches}));
        std::cout << step.program.name() << " (" << w.shape << ") on "
                  << schedule << ", " << k.shared_memory_bytes()
                  << " bytes of shared memory:\n";
        for (const std::string& line : k.schedule()) {
          std::cout << "  " << line << "\n";
        }
      }
    }
  }
  return out;
}

}  // namespace
}  // namespace tessel::samples

int main(int argc, char** argv) {
  return tessel::samples::SampleMain(
      argc, argv,
      {.name = "decode_attention",
       .usage = tessel::samples::kUsage,
       .make = tessel::samples::Make,
       .summary = tessel::samples::CeilingSummary});
}
