// The kernel registry: named factories that build a Program from JSON
// parameters, so tools (tessel-warmup) can build any registered kernel from a
// manifest entry such as {"name": "gemm", "params": {"M": 4096, ...}}.
//
//   absl::StatusOr<tessel::Program> MakeGemm(const nlohmann::json& json) {
//     tessel::KernelParams params(json);
//     TESSEL_ASSIGN_OR_RETURN(int64_t m, params.Int("M"));  // required
//     TESSEL_ASSIGN_OR_RETURN(int64_t bm, params.Int("block_m", 128));
//     TESSEL_RETURN_IF_ERROR(params.CheckAllUsed());  // misspelt keys
//     return Gemm(m, ...);
//   }
//   TESSEL_REGISTER_KERNEL(gemm, MakeGemm);
//
//   absl::StatusOr<tessel::Program> p =
//       tessel::KernelRegistry::Global().Build("gemm", {{"M", 4096}});
//
// A factory may also take the target it builds for, so that its default
// tiles fit that arch (fewer stages where shared memory is smaller):
//   absl::StatusOr<tessel::Program> MakeGemm(const nlohmann::json& json,
//                                            const tessel::Target& target) {
//     ... for (stages = 3; ; --stages) { build; if CheckSharedMemoryFits
//     (program, target).ok() or stages == 1: return program; } ...
//   }
//   registry.Build("gemm", params, tessel::Target::sm80());
// Build() without a target builds for Target::sm90a().
//
// Errors name the JSON path from "params" ("params.M: expected an integer,
// got \"4096\""); a caller that knows where params sit prefixes its own path
// ("kernels[3]."). An unknown name lists the registered ones.
//
// Static libraries: TESSEL_REGISTER_KERNEL works through a static
// initializer, which the linker drops when it sits in a static archive member
// that nothing else references. Put registering files in an OBJECT library,
// or link their static library whole ($<LINK_LIBRARY:WHOLE_ARCHIVE,lib>);
// docs/warmup.md shows both.
#ifndef TESSEL_REGISTRY_H_
#define TESSEL_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json_fwd.hpp"
#include "tessel/compile.h"
#include "tessel/dtype.h"
#include "tessel/program.h"

namespace tessel {

// Builds for `target` (its arch and shared memory per block).
using KernelFactory = std::function<absl::StatusOr<Program>(
    const nlohmann::json& params, const Target& target)>;
// The same for every target.
using PlainKernelFactory =
    std::function<absl::StatusOr<Program>(const nlohmann::json& params)>;

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The registry TESSEL_REGISTER_KERNEL fills; never destroyed.
  static KernelRegistry& Global();

  // AlreadyExists for a second factory under one name; InvalidArgument for a
  // name that is not [A-Za-z0-9_.:-]+.
  absl::Status Register(std::string name, KernelFactory factory);
  absl::Status Register(std::string name, PlainKernelFactory factory);

  bool Contains(absl::string_view name) const;
  // Sorted.
  std::vector<std::string> Names() const;

  // Runs the factory for `target`. `params` must be a JSON object (null
  // counts as {}). NotFound for an unknown name, listing the registered ones;
  // the target's status when it has one (an invalid arch).
  absl::StatusOr<Program> Build(absl::string_view name,
                                const nlohmann::json& params,
                                const Target& target) const;
  // For Target::sm90a().
  absl::StatusOr<Program> Build(absl::string_view name,
                                const nlohmann::json& params) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, KernelFactory, std::less<>> factories_
      ABSL_GUARDED_BY(mu_);
};

// Typed reads of a factory's JSON parameters with path-naming errors.
// Remembers which keys were read, so CheckAllUsed() can reject the rest.
class KernelParams {
 public:
  // `json` must outlive this object. `path` prefixes every error.
  explicit KernelParams(const nlohmann::json& json,
                        std::string path = "params");

  // Required; InvalidArgument when missing or of another type.
  absl::StatusOr<int64_t> Int(absl::string_view key) const;
  absl::StatusOr<double> Number(absl::string_view key) const;
  absl::StatusOr<bool> Bool(absl::string_view key) const;
  absl::StatusOr<std::string> String(absl::string_view key) const;
  // A dtype name as tessel::dtype_name spells it ("f16", "bf16", ...).
  absl::StatusOr<DataType> Dtype(absl::string_view key) const;

  // With a default for a missing key (a present key of another type is
  // still an error).
  absl::StatusOr<int64_t> Int(absl::string_view key, int64_t fallback) const;
  absl::StatusOr<double> Number(absl::string_view key, double fallback) const;
  absl::StatusOr<bool> Bool(absl::string_view key, bool fallback) const;
  absl::StatusOr<std::string> String(absl::string_view key,
                                     std::string fallback) const;
  absl::StatusOr<DataType> Dtype(absl::string_view key,
                                 DataType fallback) const;

  // InvalidArgument when a value lies outside [lo, hi]; for sizes.
  absl::StatusOr<int64_t> IntInRange(absl::string_view key, int64_t lo,
                                     int64_t hi) const;
  absl::StatusOr<int64_t> IntInRange(absl::string_view key, int64_t lo,
                                     int64_t hi, int64_t fallback) const;

  // InvalidArgument naming the first key that no read asked for
  // ("params.blok_m: unknown parameter (known: M, N, block_m)").
  absl::Status CheckAllUsed() const;

  const std::string& path() const { return path_; }

 private:
  // nullptr when absent; an error when `json_` is not an object.
  absl::StatusOr<const nlohmann::json*> Find(absl::string_view key) const;
  std::string PathOf(absl::string_view key) const;

  const nlohmann::json& json_;
  std::string path_;
  mutable std::set<std::string, std::less<>> used_;
};

namespace internal {
// Registers into KernelRegistry::Global(); aborts on a duplicate or invalid
// name (a build mistake, found at the program's start).
bool RegisterKernelOrDie(const char* name, KernelFactory factory);
bool RegisterKernelOrDie(const char* name, PlainKernelFactory factory);
}  // namespace internal

}  // namespace tessel

#define TESSEL_REGISTRY_CONCAT_INNER_(a, b) a##b
#define TESSEL_REGISTRY_CONCAT_(a, b) TESSEL_REGISTRY_CONCAT_INNER_(a, b)

// Registers `factory` (anything callable as
// absl::StatusOr<tessel::Program>(const nlohmann::json&) or
// (const nlohmann::json&, const tessel::Target&)) under the
// identifier `name`, at namespace scope, once per program.
#define TESSEL_REGISTER_KERNEL(name, factory)                 \
  [[maybe_unused]] static const bool TESSEL_REGISTRY_CONCAT_( \
      tessel_kernel_registered_, name) =                      \
      ::tessel::internal::RegisterKernelOrDie(#name, (factory))

#endif  // TESSEL_REGISTRY_H_
