#include "tools/warmup_driver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "jit/cache_directory.h"
#include "jit/cache_entry.h"
#include "jit/cache_key.h"
#include "jit/disk_cache.h"
#include "jit/kernel_cache.h"
#include "jit/subprocess.h"

namespace tessel::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

jit::DiskCacheOptions DiskOptions(const WarmupOptions& options) {
  jit::DiskCacheOptions disk = jit::DiskCacheOptions::FromEnv();
  // Filling the cache is the whole point: TESSEL_CACHE=off does not apply.
  disk.enabled = true;
  if (!options.cache_dir.empty()) disk.dir = options.cache_dir;
  return disk;
}

void Send(int fd, const json& message) {
  jit::WriteAll(fd, message.dump() + "\n");
}

// Present, whole and this key's (jit::CacheDirectory::HasSoundEntry), read
// without side effects.
bool EntryPresent(const jit::CacheDirectory& directory,
                  const std::string& key) {
  return directory.HasSoundEntry(key);
}

// The child's work; its messages are JSON lines on `fd`: {"key": ...} as
// soon as the key is known, then {"outcome": ..., "error": ...}.
json RunChildJob(const WarmupJob& job, const WarmupOptions& options, int fd) {
  auto hook = [&](absl::string_view stage) {
    if (options.child_hook_for_testing) {
      options.child_hook_for_testing(job, stage);
    }
  };
  hook("lower");
  const LowerOptions lower_options{.arch = job.arch,
                                   .fast_math = job.entry->fast_math,
                                   .lineinfo = job.entry->lineinfo,
                                   .pass_config = job.entry->pass_config};
  absl::StatusOr<LoweredKernel> lowered =
      options.lower(*job.program, lower_options);
  if (!lowered.ok()) {
    return {{"outcome", "failed"},
            {"error",
             absl::StrCat("lowering failed: ", lowered.status().ToString())}};
  }
  absl::StatusOr<std::string> key =
      jit::ComputeCacheKey(lowered->source, lowered->options);
  if (!key.ok()) {
    return {{"outcome", "failed"}, {"error", key.status().ToString()}};
  }
  Send(fd, {{"key", *key}});
  hook("compile");
  const jit::DiskCacheOptions disk = DiskOptions(options);
  if (options.dry_run) {
    const bool present = EntryPresent(jit::CacheDirectory(disk.dir), *key);
    return {{"outcome", present ? "cached" : "missing"}};
  }
  jit::KernelCache cache(jit::KernelCacheOptions{.disk = disk});
  absl::StatusOr<jit::CachedCubin> cubin =
      cache.GetCubin(lowered->source, lowered->options);
  if (!cubin.ok()) {
    return {{"outcome", "failed"},
            {"error", absl::StrCat("NVRTC: ", cubin.status().ToString())}};
  }
  if (cubin->key != *key) {
    return {{"outcome", "failed"},
            {"error", absl::StrCat("internal: the cache keyed the kernel ",
                                   cubin->key, ", expected ", *key)}};
  }
  // A compile the cache could not store (a full disk, a folder it may not
  // write) is a failed job, not one "removed by someone" at the end.
  if (cubin->origin == jit::CubinOrigin::kCompiled && !cubin->stored.ok()) {
    return {{"outcome", "failed"},
            {"error", absl::StrCat("compiled, but not stored in the cache: ",
                                   cubin->stored.message())}};
  }
  // What compile() needs to find the kernel without lowering.
  if (lowered->index) lowered->index(*cubin, cache.disk());
  return {{"outcome", cubin->origin == jit::CubinOrigin::kCompiled ? "compiled"
                                                                   : "cached"}};
}

struct Running {
  size_t index = 0;  // into the job list
  pid_t pid = -1;
  int fd = -1;
  std::string output;
  absl::Time start;
  absl::Time deadline;
  bool timed_out = false;
};

// A child that died mid-write leaves its temp files and maybe the key's lock
// file; remove them the way the cache's own lock holder would.
void CleanAfterDeadChild(const jit::CacheDirectory& directory,
                         const std::string& key, pid_t pid) {
  if (key.size() < 2) return;
  const fs::path folder =
      fs::path(directory.EntryPath(key, ".cubin")).parent_path();
  std::error_code ec;
  const std::string marker = absl::StrCat(".tmp.", pid, ".");
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (absl::StartsWith(name, absl::StrCat(".", key)) &&
        absl::StrContains(name, marker)) {
      std::error_code remove_ec;
      fs::remove(it->path(), remove_ec);
    }
  }
  const std::string lock = directory.EntryPath(key, ".lock");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  // Unlinked only while held, so no one waiting on it is cut out.
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    ::unlink(lock.c_str());
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
}

JobResult Collect(const Running& run, const WarmupJob& job, int wait_status,
                  const jit::CacheDirectory& directory) {
  JobResult result{.job = job};
  result.seconds = absl::ToDoubleSeconds(absl::Now() - run.start);
  json final_message;
  for (absl::string_view line : absl::StrSplit(run.output, '\n')) {
    if (line.empty()) continue;
    json message = json::parse(line, nullptr, false);
    if (!message.is_object()) continue;
    if (auto key = message.find("key");
        key != message.end() && key->is_string()) {
      result.key = key->get<std::string>();
    }
    if (message.contains("outcome")) final_message = std::move(message);
  }
  const bool exited_cleanly =
      WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  if (run.timed_out) {
    result.error = "the compile process ran past the timeout and was killed";
  } else if (WIFSIGNALED(wait_status)) {
    result.error = absl::StrCat("the compile process was killed by ",
                                jit::SignalText(WTERMSIG(wait_status)));
  } else if (!exited_cleanly) {
    result.error = absl::StrCat("the compile process exited with status ",
                                WEXITSTATUS(wait_status));
  } else if (!final_message.is_object()) {
    result.error = "the compile process ended without a result";
  } else {
    const std::string outcome = final_message.value("outcome", "");
    if (outcome == "compiled") {
      result.outcome = JobOutcome::kCompiled;
    } else if (outcome == "cached") {
      result.outcome = JobOutcome::kCached;
    } else if (outcome == "missing") {
      result.outcome = JobOutcome::kMissing;
    } else {
      result.error = final_message.value("error", "failed (no reason given)");
    }
    return result;
  }
  result.outcome = JobOutcome::kFailed;
  CleanAfterDeadChild(directory, result.key, run.pid);
  return result;
}

absl::Status ValidateOptions(const WarmupOptions& options) {
  if (options.archs.empty()) {
    return absl::InvalidArgumentError(
        "no arch given: pass --arch sm_90a (or a list: sm_90a,sm_80)");
  }
  for (const std::string& arch : options.archs) {
    if (absl::Status s = CheckSupportedArch(arch); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--arch ", arch, ": ", s.message()));
    }
  }
  if (options.shard.count < 1 || options.shard.index < 1 ||
      options.shard.index > options.shard.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard ", options.shard.ToString(),
                     ": expected I/N with 1 <= I <= N"));
  }
  if (options.jobs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs ", options.jobs, ": expected at least 1"));
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the job timeout must be positive");
  }
  if (!options.lower) {
    return absl::InvalidArgumentError("no lowering function");
  }
  return absl::OkStatus();
}

}  // namespace

const char* JobOutcomeName(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kCompiled:
      return "compiled";
    case JobOutcome::kCached:
      return "cached";
    case JobOutcome::kMissing:
      return "missing";
    case JobOutcome::kFailed:
      return "failed";
  }
  return "?";
}

std::string WarmupJob::Describe() const {
  return absl::StrCat(entry->Path(), " ", entry->Describe(), " ", arch);
}

int WarmupReport::Count(JobOutcome outcome) const {
  return static_cast<int>(
      std::count_if(results.begin(), results.end(),
                    [&](const JobResult& r) { return r.outcome == outcome; }));
}

std::vector<WarmupJob> PlanJobs(const Manifest& manifest,
                                const ManifestPrograms& programs,
                                const std::vector<std::string>& archs,
                                const Shard& shard) {
  std::vector<WarmupJob> jobs;
  for (size_t i = 0; i < manifest.kernels.size() && i < programs.size(); ++i) {
    const ManifestEntry& entry = manifest.kernels[i];
    for (const std::string& arch : archs) {
      if (!entry.archs.empty() &&
          std::find(entry.archs.begin(), entry.archs.end(), arch) ==
              entry.archs.end()) {
        continue;
      }
      if (!shard.Contains(entry, arch)) continue;
      auto program = programs[i].find(arch);
      const Program* built =
          program == programs[i].end() ? nullptr : &program->second;
      jobs.push_back(WarmupJob{&entry, built, arch});
    }
  }
  return jobs;
}

absl::StatusOr<WarmupReport> RunWarmup(const Manifest& manifest,
                                       const ManifestPrograms& programs,
                                       const WarmupOptions& options,
                                       WarmupProgress* progress) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (programs.size() != manifest.kernels.size()) {
    return absl::InvalidArgumentError(
        "RunWarmup: one program per manifest entry expected");
  }
  const jit::DiskCacheOptions disk = DiskOptions(options);
  // A dry run writes nothing, but refuses the same folders.
  if (absl::Status trusted = jit::CacheDirectory(disk.dir).CheckTrusted();
      !trusted.ok()) {
    return trusted;
  }
  if (!options.dry_run) {
    jit::DiskCache probe(disk);
    if (!probe.enabled()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the cache folder ", disk.dir,
                       " cannot be used: ", probe.disabled_reason()));
    }
  }
  const jit::CacheDirectory directory(disk.dir);
  const std::vector<WarmupJob> jobs =
      PlanJobs(manifest, programs, options.archs, options.shard);
  for (const WarmupJob& job : jobs) {
    if (job.program == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunWarmup: ", job.entry->Path(), " was not built for ",
                       job.arch, " (BuildManifestPrograms with every --arch)"));
    }
  }

  WarmupReport report;
  report.jobs = options.jobs;
  report.dry_run = options.dry_run;
  report.shard = options.shard;
  report.all_jobs =
      static_cast<int>(options.shard.count > 1
                           ? PlanJobs(manifest, programs, options.archs).size()
                           : jobs.size());
  // A run that warms nothing at all is a mistake in the manifest or the
  // archs (one shard of several may be empty).
  if (report.all_jobs == 0) {
    return absl::InvalidArgumentError(
        manifest.kernels.empty()
            ? "nothing to warm: the manifest lists no kernels"
            : absl::StrCat("nothing to warm: no manifest entry is for --arch ",
                           absl::StrJoin(options.archs, ","),
                           " (each entry's \"archs\" names those it is for)"));
  }
  std::vector<std::optional<JobResult>> results(jobs.size());
  const absl::Time run_start = absl::Now();
  if (progress != nullptr) progress->Start(static_cast<int>(jobs.size()));

  std::vector<Running> running;
  size_t next = 0;
  int done = 0;
  auto finish = [&](size_t slot, int wait_status) {
    Running run = std::move(running[slot]);
    running.erase(running.begin() + static_cast<ptrdiff_t>(slot));
    JobResult result = Collect(run, jobs[run.index], wait_status, directory);
    ++done;
    if (progress != nullptr) {
      std::vector<const WarmupJob*> in_flight;
      for (const Running& r : running) in_flight.push_back(&jobs[r.index]);
      progress->JobDone(result, done, static_cast<int>(jobs.size()), in_flight);
    }
    results[run.index] = std::move(result);
  };

  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() &&
           running.size() < static_cast<size_t>(options.jobs)) {
      std::fflush(nullptr);  // no buffered output duplicated into the child
      absl::StatusOr<jit::Child> child = jit::StartChild([&](int fd) {
        for (const Running& r : running) ::close(r.fd);
        Send(fd, RunChildJob(jobs[next], options, fd));
      });
      if (!child.ok()) {
        // Out of processes or descriptors: this job fails, the run goes on.
        JobResult failed{.job = jobs[next]};
        failed.error = absl::StrCat("cannot start a compile process: ",
                                    child.status().message());
        ++done;
        if (progress != nullptr) {
          progress->JobDone(failed, done, static_cast<int>(jobs.size()), {});
        }
        results[next++] = std::move(failed);
        if (running.empty()) continue;
        break;
      }
      const absl::Time now = absl::Now();
      running.push_back(Running{.index = next,
                                .pid = child->pid,
                                .fd = child->fd,
                                .start = now,
                                .deadline = now + options.timeout});
      ++next;
    }

    std::vector<pollfd> polls;
    absl::Time nearest = absl::InfiniteFuture();
    for (const Running& r : running) {
      polls.push_back(pollfd{.fd = r.fd, .events = POLLIN, .revents = 0});
      nearest = std::min(nearest, r.deadline);
    }
    const int wait_ms = static_cast<int>(std::clamp<int64_t>(
        absl::ToInt64Milliseconds(nearest - absl::Now()) + 1, 0, 250));
    const int ready = ::poll(polls.data(), polls.size(), wait_ms);
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    // Read what arrived; a closed pipe means the child is done.
    for (size_t i = running.size(); i-- > 0;) {
      if (polls[i].revents == 0) continue;
      const jit::ReadResult read =
          jit::ReadSome(running[i].fd, &running[i].output);
      if (read != jit::ReadResult::kClosed) continue;
      ::close(running[i].fd);
      const int status = jit::Reap(running[i].pid);
      finish(i, status);
    }
    const absl::Time now = absl::Now();
    for (Running& r : running) {
      if (!r.timed_out && now >= r.deadline) {
        r.timed_out = true;
        ::kill(r.pid, SIGKILL);  // its pipe closes; collected above
      }
    }
  }
  if (progress != nullptr) progress->Finish();
  for (std::optional<JobResult>& result : results) {
    report.results.push_back(*std::move(result));
  }
  report.seconds = absl::ToDoubleSeconds(absl::Now() - run_start);
  if (!options.dry_run) {
    // The cache evicts least recently used entries above its size limit,
    // which may have been this run's own: check that they are all there.
    for (const JobResult& r : report.results) {
      if (r.outcome != JobOutcome::kFailed && !EntryPresent(directory, r.key)) {
        ++report.evicted;
      }
    }
    // Only the cache's own eviction records itself: entries gone without
    // such a record were removed by someone else (tessel-cache prune or
    // clear, another program).
    const bool size_limit = directory.LastSizeLimitEviction() >= run_start;
    if (report.evicted > 0 && size_limit) {
      report.warning = absl::StrFormat(
          "%d of this run's kernels were evicted again by the cache's size "
          "limit (%d KiB): raise TESSEL_CACHE_MAX_BYTES, here and where the "
          "application runs",
          report.evicted, disk.max_bytes >> 10);
    } else if (report.evicted > 0) {
      report.warning = absl::StrFormat(
          "%d of this run's kernels were removed from the cache while it ran "
          "(not by its size limit: by tessel-cache prune or clear, or another "
          "program); run the warmup again",
          report.evicted);
    }
  }
  return report;
}

std::string FormatSummary(const WarmupReport& report) {
  std::string out;
  const int total = static_cast<int>(report.results.size());
  if (report.shard.count > 1) {
    absl::StrAppendFormat(&out, "shard %s: %d of the manifest's %d jobs\n",
                          report.shard.ToString(), total, report.all_jobs);
  }
  if (report.dry_run) {
    const int missing = report.Count(JobOutcome::kMissing);
    absl::StrAppendFormat(&out,
                          "dry run: %d of %d kernels missing from the cache, "
                          "%d cached, %d failed to lower\n",
                          missing, total, report.Count(JobOutcome::kCached),
                          report.Count(JobOutcome::kFailed));
    for (const JobResult& r : report.results) {
      if (r.outcome == JobOutcome::kMissing) {
        absl::StrAppend(&out, "  missing: ", r.job.Describe(), "  key ", r.key,
                        "\n");
      }
    }
  } else {
    absl::StrAppendFormat(
        &out,
        "warmup: %d kernels in %.2fs with %d jobs: %d compiled, %d already "
        "cached, %d failed\n",
        total, report.seconds, report.jobs, report.Count(JobOutcome::kCompiled),
        report.Count(JobOutcome::kCached), report.Count(JobOutcome::kFailed));
    std::vector<const JobResult*> compiled;
    double compile_seconds = 0;
    for (const JobResult& r : report.results) {
      if (r.outcome != JobOutcome::kCompiled) continue;
      compiled.push_back(&r);
      compile_seconds += r.seconds;
    }
    if (!compiled.empty()) {
      std::sort(compiled.begin(), compiled.end(),
                [](const JobResult* a, const JobResult* b) {
                  return a->seconds > b->seconds;
                });
      absl::StrAppendFormat(&out, "  compile time: %.2fs in all; slowest:\n",
                            compile_seconds);
      for (size_t i = 0; i < compiled.size() && i < 5; ++i) {
        absl::StrAppendFormat(&out, "    %7.2fs  %s\n", compiled[i]->seconds,
                              compiled[i]->job.Describe());
      }
    }
  }
  if (!report.warning.empty()) {
    absl::StrAppend(&out, "  WARNING: ", report.warning, "\n");
  }
  for (const JobResult& r : report.results) {
    if (r.outcome != JobOutcome::kFailed) continue;
    // NVRTC logs run long: the first lines name the cause.
    constexpr size_t kMaxLines = 16;
    std::vector<absl::string_view> lines = absl::StrSplit(r.error, '\n');
    const size_t shown = std::min(lines.size(), kMaxLines);
    absl::StrAppend(&out, "  FAILED: ", r.job.Describe(), "\n");
    for (size_t i = 0; i < shown; ++i) {
      absl::StrAppend(&out, "    ", lines[i], "\n");
    }
    if (shown < lines.size()) {
      absl::StrAppend(&out, "    ... (", lines.size() - shown,
                      " more lines)\n");
    }
  }
  return out;
}

}  // namespace tessel::tools
