// The command line every sample binary shares, and the result table.
//
//   int main(int argc, char** argv) {
//     return tessel::samples::SampleMain(
//         argc, argv, {.name = "gemm", .usage = "...",
//                      .make = [](const SampleArgs& a, Flags& f) {...}});
//   }
//
// Flags: --check (compare with the float64 reference; the default when
// neither --check nor --bench is given), --bench (time: do_bench on the GPU,
// the wall clock on the interpreter; prints TFLOP/s or GB/s and a JSON
// report), --backend=gpu|cpu (default: gpu when there is one),
// --size=small|bench|<dims> (dims: "4096x4096x4096" in the sample's order or
// "M=4096,N=4096,K=4096"), --json=FILE (also write the JSON report there),
// --arch=ARCH (alias --compile=ARCH; cpu backend: also compile each kernel for
// ARCH, e.g. sm_90a, through the kernel cache), --seed=N, --tune (samples that
// tune: pick the tile with tessel::autotune first, then bench it),
// --cuda-graph (with --bench: do_bench replays CUDA graphs of back-to-back
// calls, so launch cost is not timed; L2 is flushed between replays only;
// the records' variant gets "cuda_graph"); plus the sample's own flags.
// Exit status: 0 all checks passed, 1 a check failed, 2 an error.
#ifndef TESSEL_SAMPLES_SAMPLE_MAIN_H_
#define TESSEL_SAMPLES_SAMPLE_MAIN_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "samples/execute.h"
#include "samples/workload.h"

namespace tessel::samples {

// --key=value flags (a bare --key is "true"), with the keys read recorded so
// that a misspelt one is an error.
class Flags {
 public:
  static absl::StatusOr<Flags> Parse(int argc, char** argv);
  static Flags FromMap(std::map<std::string, std::string> values);

  bool Has(const std::string& key) const;
  // A flag given with no value ("--json" alone) has none to give: an error
  // CheckAllUsed() reports, unless `bare` says what it means ("--causal").
  std::string String(const std::string& key, std::string fallback,
                     std::optional<std::string> bare = std::nullopt) const;
  // String() that must be one of `choices`: "--causal=x: expected true,
  // false or both" otherwise.
  absl::StatusOr<std::string> OneOf(
      const std::string& key, const std::vector<std::string>& choices,
      std::string fallback,
      std::optional<std::string> bare = std::nullopt) const;
  absl::StatusOr<int64_t> Int(const std::string& key, int64_t fallback) const;
  // Each --key given overrides its field; the others keep their defaults:
  //   RETURN_IF_ERROR(flags.Ints({{"block-m", &t.block_m}, {"stages", &s}}));
  absl::Status Ints(
      std::initializer_list<std::pair<const char*, int*>> fields) const;
  absl::StatusOr<bool> Bool(const std::string& key, bool fallback) const;
  absl::StatusOr<DataType> Dtype(const std::string& key,
                                 DataType fallback) const;
  // InvalidArgument naming the first flag nothing read, or one read as a
  // string that was given no value.
  absl::Status CheckAllUsed() const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> bare_;  // given as "--key" alone
  mutable std::set<std::string> used_;
  mutable absl::Status missing_value_;
};

// " (did you mean --stats?)" when one of `known` is within a few edits of
// `key`, else "".
std::string DidYouMean(const std::string& key,
                       const std::set<std::string>& known);

// "4096x2048x1024" (positional, in `names` order) or "M=4096,N=2048,K=1024"
// (any order, names of `names`); every name must get a positive value.
absl::StatusOr<std::map<std::string, int64_t>> ParseDims(
    const std::string& spec, const std::vector<std::string>& names);

struct ResultRow;

struct SampleArgs {
  std::string size = "small";  // small | bench | <dims>
  Backend backend = Backend::kCpu;
  uint64_t seed = 1;
  bool tune = false;  // --tune (samples whose spec says `tunes`)
};

struct SampleSpec {
  std::string name;
  std::string usage;  // the sample's own flags, one per line
  // The workloads of one invocation (several for "small": a few configs).
  std::function<absl::StatusOr<std::vector<Workload>>(const SampleArgs&,
                                                      const Flags&)>
      make;
  // Accepts --tune: make() autotunes the kernel's tile for the size first
  // (SampleArgs::tune), and the winner is benched (--tune implies --bench).
  bool tunes = false;
  // Lines printed after the result table (e.g. a rate against a ceiling
  // measured in the same run); empty: nothing.
  std::function<std::string(const std::vector<ResultRow>&)> summary;
};

int SampleMain(int argc, char** argv, const SampleSpec& spec);

// The scheduler switches every sample takes: --wgmma, --tma,
// --warp-specialized, --persistent (each true by default).
absl::StatusOr<PassConfig> PassConfigFromFlags(const Flags& flags);

// One workload per config, in order; the first failure is returned.
template <typename Config, typename MakeWorkload>
absl::StatusOr<std::vector<Workload>> WorkloadsFor(
    const std::vector<Config>& configs, MakeWorkload make, uint64_t seed) {
  std::vector<Workload> out;
  for (const Config& c : configs) {
    absl::StatusOr<Workload> w = make(c, seed);
    if (!w.ok()) return w.status();
    out.push_back(*std::move(w));
  }
  return out;
}

// One row of the result table / JSON report.
struct ResultRow {
  std::string kernel;
  std::string shape;
  RunResult run;
  double flops = 0;
  double bytes = 0;
  std::optional<bool> check;  // nullopt: not checked
  BenchLabel label;
};

// The label variant of a CUDA-graph-timed record: "cuda_graph", or
// "NN+cuda_graph" after a variant, so it pairs with peers timed alike.
std::string WithCudaGraph(const std::string& variant);

// A row of a workload and how it ran.
ResultRow MakeRow(const Workload& w, const RunResult& run,
                  std::optional<bool> check);

// "kernel  shape  backend  time  TFLOP/s|GB/s  cache  check" as a table.
std::string FormatTable(const std::vector<ResultRow>& rows);
// The report bench/device.py reads (docs/benchmarks.md, written by
// tessel/bench_report.h): one record per row, do_bench's statistics when the
// row was benched on the GPU; otherwise the one wall-clock run, with the impl
// marked ":interpreter" / ":wallclock" so that it is never compared with a
// peer. Records also carry "name", "backend", "cache", "kernel_ms" and
// "check".
nlohmann::json BenchJson(const std::string& benchmark,
                         const std::vector<ResultRow>& rows);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_SAMPLE_MAIN_H_
