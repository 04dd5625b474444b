// Autotuning: pick the fastest of a kernel's tile configs on this GPU, and
// remember the pick on disk.
//
//   namespace T = tessel;
//   T::TuneSpace space = T::TuneSpace::Product(
//       {{"block_m", {64, 128, 256}}, {"block_n", {64, 128}},
//        {"stages", {2, 3}}},
//       [](const T::TuneConfig& c) {  // optional: drop configs up front
//         return c.Int("block_m", 0) * c.Int("block_n", 0) <= 256 * 128;
//       });
//   T::TuneRequest request{
//       .kernel = "gemm_f16",
//       .space = space,
//       .factory = [&](const T::TuneConfig& c) -> absl::StatusOr<T::Program> {
//         return MyGemm(M, N, K, c.Int("block_m", 128), ...);
//       },
//       .args = {a, b, c},  // device tensors every candidate is launched on
//       .check = [&](const T::CompiledKernel& k) -> absl::Status {
//         ... poison c, k.launch({a, b, c}), copy c back, compare ...
//       }};
//   absl::StatusOr<T::TuneResult> r = T::autotune(
//       request, {.budget = absl::Minutes(2), .progress = &std::cerr});
//   if (r.ok()) TESSEL_RETURN_IF_ERROR(r->kernel.launch({a, b, c}, stream));
//
// autotune() builds and compiles the candidates on a pool of threads, then,
// one at a time on the GPU, checks each (request.check) and times it
// (do_bench). A candidate whose factory, compile, check or launch fails is
// reported and skipped. With a progress stream it prints one line each:
//
//   [3/12] block_m=128 block_n=64 stages=3: 0.412 ms
//   [4/12] block_m=256 block_n=128 stages=4: compile failed: ...
//
// The factory is called from several threads at once (ProgramBuilder keeps
// its state per thread, so a factory that only builds a program is fine).
//
// The winner is stored as JSON under <kernel cache root>/autotune/ (see
// docs/autotune.md), keyed by the kernel name, the args' shapes and dtypes,
// key_extra, the device's name and arch, tessel's version and the space's
// configs. The next autotune() with the same key compiles the stored winner
// (a kernel cache hit) and evaluates nothing.
#ifndef TESSEL_AUTOTUNE_H_
#define TESSEL_AUTOTUNE_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tessel/compile.h"
#include "tessel/profiler.h"
#include "tessel/program.h"
#include "tessel/runtime.h"

namespace tessel {

// One parameter value: an integer, a bool or a string.
class TuneValue {
 public:
  TuneValue(int value) : value_(int64_t{value}) {}              // NOLINT
  TuneValue(int64_t value) : value_(value) {}                   // NOLINT
  TuneValue(bool value) : value_(value) {}                      // NOLINT
  TuneValue(const char* value) : value_(std::string(value)) {}  // NOLINT
  TuneValue(std::string value) : value_(std::move(value)) {}    // NOLINT

  bool is_int() const { return value_.index() == 0; }
  bool is_bool() const { return value_.index() == 1; }
  bool is_string() const { return value_.index() == 2; }
  // The value; only valid for its own kind (checked loudly).
  int64_t int_value() const;
  bool bool_value() const;
  const std::string& string_value() const;

  std::string ToString() const;  // 128, true, NN
  friend bool operator==(const TuneValue& a, const TuneValue& b) {
    return a.value_ == b.value_;
  }

 private:
  std::variant<int64_t, bool, std::string> value_;
};

// Named parameter values, in the order they were set.
class TuneConfig {
 public:
  TuneConfig() = default;
  TuneConfig(std::initializer_list<std::pair<std::string, TuneValue>> values);

  // Sets (or replaces) a parameter.
  TuneConfig& Set(std::string name, TuneValue value);
  bool Has(std::string_view name) const;
  // nullptr when absent.
  const TuneValue* Find(std::string_view name) const;

  // The value, or `fallback` when absent. A present value of another kind is
  // a bug in the factory: use the Get* forms to get a Status instead.
  int64_t Int(std::string_view name, int64_t fallback) const;
  bool Bool(std::string_view name, bool fallback) const;
  std::string String(std::string_view name, std::string fallback) const;
  // NotFound when absent, InvalidArgument when of another kind.
  absl::StatusOr<int64_t> GetInt(std::string_view name) const;
  absl::StatusOr<bool> GetBool(std::string_view name) const;
  absl::StatusOr<std::string> GetString(std::string_view name) const;

  const std::vector<std::pair<std::string, TuneValue>>& values() const {
    return values_;
  }
  // "block_m=128 block_n=64 swizzle=true" ("(empty)" for none).
  std::string ToString() const;
  // {"block_m":128,"block_n":64,"swizzle":true}, in order.
  std::string ToJson() const;
  // The inverse of ToJson; InvalidArgument for anything but an object of
  // integers, bools and strings.
  static absl::StatusOr<TuneConfig> FromJson(std::string_view json);

  // Equal names and values; the order does not count.
  friend bool operator==(const TuneConfig& a, const TuneConfig& b);

 private:
  std::vector<std::pair<std::string, TuneValue>> values_;
};

// The configs to try: an explicit list, or the cartesian product of named
// value lists (the first axis varies slowest) with an optional filter.
class TuneSpace {
 public:
  struct Axis {
    std::string name;
    std::vector<TuneValue> values;
  };
  using Filter = std::function<bool(const TuneConfig&)>;

  TuneSpace() = default;
  static TuneSpace List(std::vector<TuneConfig> configs);
  static TuneSpace Product(std::vector<Axis> axes, Filter filter = nullptr);

  // The configs in order. InvalidArgument for an empty axis, a repeated axis
  // name, a repeated config, a product above a million configs, or an empty
  // result (everything filtered out).
  absl::StatusOr<std::vector<TuneConfig>> Enumerate() const;

 private:
  std::vector<TuneConfig> list_;
  std::vector<Axis> axes_;
  Filter filter_;
  bool is_product_ = false;
};

using ProgramFactory =
    std::function<absl::StatusOr<Program>(const TuneConfig& config)>;
// OK when the kernel computes the right thing. It launches the kernel itself
// (on the request's args or its own) and compares with a reference; it must
// overwrite the outputs with garbage first, or a broken candidate may pass
// on the previous candidate's results.
using KernelCheck = std::function<absl::Status(const CompiledKernel& kernel)>;

struct TuneRequest {
  // Names the kernel in the key and in the stored file ("gemm_NN").
  std::string kernel;
  TuneSpace space;
  ProgramFactory factory;
  // Device tensors each candidate is timed on (kernel.launch(args, stream)).
  // Their shapes and dtypes are part of the key.
  std::vector<TensorView> args;
  // Run once per candidate before it is timed; empty: only a launch that
  // must succeed.
  KernelCheck check;
  // Anything else that changes which config wins (a layout, a flag).
  std::string key_extra;
  // What a config changes in how its candidate is compiled (a pass config
  // such as ping-pong consumers), applied to a copy of TuneOptions::compile;
  // empty: every candidate is compiled with TuneOptions::compile.
  std::function<void(const TuneConfig& config, CompileOptions& options)>
      adjust_compile;
};

// What happened to one candidate.
enum class TuneOutcome {
  kTimed,          // compiled, checked and timed
  kBuildFailed,    // the factory returned an error
  kCompileFailed,  // compile() returned an error
  kCheckFailed,    // the check (or its first launch) failed
  kTimingFailed,   // do_bench failed
  kSkippedBudget,  // not evaluated: the time budget was spent
};
const char* TuneOutcomeName(TuneOutcome outcome);  // "compile failed", ...

struct TuneCandidate {
  int index = 0;  // 0-based position in the space
  int total = 0;
  TuneConfig config;
  TuneOutcome outcome = TuneOutcome::kSkippedBudget;
  absl::Status status;  // why it failed (OK when timed or skipped)
  double ms = 0;        // do_bench's statistic (kTimed only)
  double compile_ms = 0;
  // "[3/12] block_m=128 block_n=64: 0.412 ms" (the progress line).
  std::string ToString() const;
};

struct TuneOptions {
  // How candidates are compiled (target, pass config, isolated...).
  CompileOptions compile;
  // Threads that build and compile candidates; 0: one per hardware thread,
  // at most 8.
  int compile_threads = 0;
  // No compile, check or timing starts after this much time; the rest are
  // reported as skipped. The best of what was timed wins and is stored
  // (retune = true searches again).
  absl::Duration budget = absl::InfiniteDuration();
  // How each candidate is timed (shorter than do_bench's defaults).
  BenchOptions bench = {.warmup_ms = 10, .rep_ms = 40};
  // Read a stored winner, and store the new one.
  bool persist = true;
  // Tune even when a winner is stored (and replace it).
  bool retune = false;
  // The store's folder; empty: <kernel cache root>/autotune, where the root
  // is TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel.
  // TESSEL_CACHE=off switches the default store off.
  std::string store_dir;
  // One line per candidate (TuneCandidate::ToString) and a summary.
  std::ostream* progress = nullptr;
  // Called after each candidate, on the tuning thread.
  std::function<void(const TuneCandidate&)> on_candidate;
};

struct TuneResult {
  TuneConfig best;
  double best_ms = 0;       // as timed when tuned (also when loaded)
  CompiledKernel kernel;    // the winner, compiled with options.compile
  bool from_store = false;  // loaded: nothing was evaluated
  std::string key;          // 32 hex digits
  std::string store_path;   // the JSON file; empty when not persisted
  // Every candidate in space order (empty when from_store).
  std::vector<TuneCandidate> candidates;
  int timed = 0;
  int failed = 0;
  int skipped = 0;  // for the budget
  // Store files ignored or not written, and why (also printed to stderr).
  std::vector<std::string> warnings;
};

// Tunes `request` on the current context's device (device 0 when none is
// current; see the file comment). Unavailable without a
// GPU; InvalidArgument for a bad request or space; NotFound when no
// candidate passed (the message lists why each failed); DeadlineExceeded
// when the budget ran out before any did.
absl::StatusOr<TuneResult> autotune(const TuneRequest& request,
                                    const TuneOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_AUTOTUNE_H_
