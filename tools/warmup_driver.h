// The warmup driver behind tessel-warmup: compiles every (manifest entry,
// arch) into the disk cache, each in a forked child process, N at a time.
//
//   tessel::tools::WarmupOptions options;
//   options.archs = {"sm_90a", "sm_80"};
//   options.jobs = 8;
//   // programs: BuildManifestPrograms(manifest, registry, options.archs)
//   ASSIGN_OR_RETURN(tessel::tools::WarmupReport report,
//                    tessel::tools::RunWarmup(manifest, programs, options));
//   std::cout << tessel::tools::FormatSummary(report);
//
// A child lowers the program (passes + codegen), computes its cache key and
// asks the kernel cache, which answers from disk without compiling when the
// entry is there ("cached") and compiles and stores it otherwise
// ("compiled"). The disk cache's per-key lock makes several warmups (or
// applications) sharing one cache compile each key once. A child that
// crashes, hangs past the timeout or fails is one failed job with its reason;
// the others go on.
#ifndef TESSEL_TOOLS_WARMUP_DRIVER_H_
#define TESSEL_TOOLS_WARMUP_DRIVER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tessel/program.h"
#include "tools/lowering.h"
#include "tools/manifest.h"
#include "tools/shard.h"

namespace tessel::tools {

enum class JobOutcome {
  kCompiled,  // compiled by this job and stored
  kCached,    // already in the cache: not compiled
  kMissing,   // --dry-run: not in the cache
  kFailed,
};
const char* JobOutcomeName(JobOutcome outcome);  // "compiled", ...

struct WarmupJob {
  const ManifestEntry* entry = nullptr;
  const Program* program = nullptr;
  std::string arch;

  std::string Describe() const;  // "kernels[2] gemm {...} sm_90a"
};

struct JobResult {
  WarmupJob job;
  JobOutcome outcome = JobOutcome::kFailed;
  std::string key;    // the cache key, when lowering got that far
  std::string error;  // for kFailed
  double seconds = 0;
};

struct WarmupReport {
  std::vector<JobResult> results;  // in manifest order, then arch order
  double seconds = 0;              // wall time of the whole run
  int jobs = 1;
  bool dry_run = false;
  Shard shard;       // --shard; results hold only this shard's jobs
  int all_jobs = 0;  // the jobs of every shard
  // Entries of this run gone by its end (the cache's size limit, or a
  // removal from outside: `warning` says which).
  int evicted = 0;
  std::string warning;

  int Count(JobOutcome outcome) const;
  bool ok() const {
    return Count(JobOutcome::kFailed) == 0 &&
           Count(JobOutcome::kMissing) == 0 && evicted == 0;
  }
};

// Sees each job finish; the driver calls it from its only thread.
class WarmupProgress {
 public:
  virtual ~WarmupProgress() = default;
  virtual void Start(int total) {}
  // `running`: the jobs still in flight.
  virtual void JobDone(const JobResult& result, int done, int total,
                       const std::vector<const WarmupJob*>& running) {}
  virtual void Finish() {}
};

struct WarmupOptions {
  std::vector<std::string> archs;  // from --arch
  int jobs = 1;
  std::string cache_dir;  // empty: TESSEL_CACHE_DIR or the default
  bool dry_run = false;
  Shard shard;  // --shard I/N: only the jobs of shard I (shard.h)
  absl::Duration timeout = absl::Minutes(10);  // per job
  LowerFn lower = LowerWithCodegen;
  // Runs in each child at `stage` "lower" (before lowering) and "compile"
  // (key known, before the cache lookup); tests make the child crash or hang.
  std::function<void(const WarmupJob&, absl::string_view stage)>
      child_hook_for_testing;
};

// The jobs of a manifest: each entry on each arch of `archs` that the entry
// allows, in manifest order, with the entry's program for that arch
// (nullptr when `programs` has none); of those, the ones in `shard`.
std::vector<WarmupJob> PlanJobs(const Manifest& manifest,
                                const ManifestPrograms& programs,
                                const std::vector<std::string>& archs,
                                const Shard& shard = {});

// InvalidArgument for bad options (no arch, an arch the toolkit cannot
// compile for, jobs < 1, a job whose program was not built), FailedPrecondition
// when the cache folder cannot be used. Failed jobs are in the report, not
// in the status.
absl::StatusOr<WarmupReport> RunWarmup(const Manifest& manifest,
                                       const ManifestPrograms& programs,
                                       const WarmupOptions& options,
                                       WarmupProgress* progress = nullptr);

// compiled, already cached, failed (with reasons), total and slowest times;
// for a dry run, what is missing.
std::string FormatSummary(const WarmupReport& report);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_WARMUP_DRIVER_H_
