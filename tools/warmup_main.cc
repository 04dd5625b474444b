#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tessel/warmup.h"
#include "tools/cli.h"
#include "tools/manifest.h"
#include "tools/progress.h"
#include "tools/shard.h"
#include "tools/warmup_main.h"

namespace tessel {
namespace tools {
namespace {

constexpr char kUsage[] =
    R"(usage: tessel-warmup --manifest FILE --arch ARCH[,ARCH...] [options]

Compiles every (kernel, params, arch) of the manifest into the tessel disk
cache, each compile in its own child process.

  --manifest FILE       the kernels to compile (docs/warmup.md)
  --arch LIST           target archs, e.g. sm_90a or sm_90a,sm_80 (repeatable)
  --jobs N              compiles at once (default: the number of cores)
  --cache-dir DIR       the cache folder (default: $TESSEL_CACHE_DIR, else
                        $XDG_CACHE_HOME/tessel, else ~/.cache/tessel)
  --dry-run             compile nothing: list what is missing from the cache
  --shard I/N           only the jobs of shard I of N (1 <= I <= N): N
                        machines, each with its own I, cover the manifest
                        once; merge their caches with tessel-cache
                        export/import (docs/warmup.md)
  --timeout SECONDS     per compile (default 600)
  --progress MODE       auto (a bar on a terminal), bar or plain
  --list-kernels        print the registered kernel names and exit
  --help                this text
  --version             tessel's and NVRTC's versions

Exit status: 0 everything is in the cache; 1 a kernel failed to compile (or,
with --dry-run, is missing); 2 a usage, manifest or cache folder error.
)";

struct Flags {
  std::string manifest;
  std::vector<std::string> archs;
  int jobs = 0;
  std::string cache_dir;
  bool dry_run = false;
  Shard shard;
  int timeout_seconds = 600;
  std::string progress = "auto";
  bool list_kernels = false;
  bool help = false;
  bool version = false;
};

// --name VALUE and --name=VALUE.
absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    std::string name(arg), value;
    bool has_value = false;
    if (size_t eq = arg.find('=');
        arg.substr(0, 2) == "--" && eq != absl::string_view::npos) {
      name = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
      has_value = true;
    }
    auto take_value = [&]() -> absl::StatusOr<std::string> {
      if (!has_value && i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": missing its value"));
      }
      if (!has_value) value = argv[++i];
      // "--cache-dir ''" is a mistake, not "the default".
      if (value.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": the value is empty"));
      }
      return value;
    };
    // A switch takes no value: "--dry-run=false" must not dry-run.
    auto is_switch = [&](const char* flag) -> absl::StatusOr<bool> {
      if (name != flag) return false;
      if (has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " takes no value"));
      }
      return true;
    };
    auto take_int = [&](int lo) -> absl::StatusOr<int> {
      absl::StatusOr<std::string> text = take_value();
      if (!text.ok()) return text.status();
      int number = 0;
      if (!absl::SimpleAtoi(*text, &number) || number < lo) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, " ", *text, ": expected an integer of at least ", lo));
      }
      return number;
    };
    bool* switch_flag = nullptr;
    for (auto [flag, field] :
         {std::pair{"--help", &flags.help}, std::pair{"-h", &flags.help},
          std::pair{"--version", &flags.version},
          std::pair{"--dry-run", &flags.dry_run},
          std::pair{"--list-kernels", &flags.list_kernels}}) {
      absl::StatusOr<bool> matched = is_switch(flag);
      if (!matched.ok()) return matched.status();
      if (*matched) switch_flag = field;
    }
    if (switch_flag != nullptr) {
      *switch_flag = true;
    } else if (name == "--manifest") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      flags.manifest = *v;
    } else if (name == "--cache-dir") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      flags.cache_dir = *v;
    } else if (name == "--arch") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      if (v->find_first_not_of(',') == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--arch '", *v, "': names no arch (e.g. sm_90a or sm_90a,sm_80)"));
      }
      for (absl::string_view arch :
           absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        // An arch named twice (--arch sm_90a,sm_90a) is one arch's jobs.
        if (std::find(flags.archs.begin(), flags.archs.end(), arch) ==
            flags.archs.end()) {
          flags.archs.emplace_back(arch);
        }
      }
    } else if (name == "--shard") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      absl::StatusOr<Shard> shard = ParseShard(*v);
      if (!shard.ok()) return shard.status();
      flags.shard = *shard;
    } else if (name == "--progress") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      if (*v != "auto" && *v != "bar" && *v != "plain") {
        return absl::InvalidArgumentError(
            absl::StrCat("--progress ", *v, ": expected auto, bar or plain"));
      }
      flags.progress = *v;
    } else if (name == "--jobs" || name == "-j") {
      absl::StatusOr<int> v = take_int(1);
      if (!v.ok()) return v.status();
      flags.jobs = *v;
    } else if (name == "--timeout") {
      absl::StatusOr<int> v = take_int(1);
      if (!v.ok()) return v.status();
      flags.timeout_seconds = *v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          name.substr(0, 1) == "-" ? "unknown flag " : "unexpected argument ",
          name,
          DidYouMean(name, {"--manifest", "--arch", "--jobs", "--cache-dir",
                            "--dry-run", "--shard", "--timeout", "--progress",
                            "--list-kernels", "--help", "--version"}),
          "; see --help"));
    }
  }
  return flags;
}

}  // namespace

int WarmupMainWithConfig(int argc, char** argv,
                         const WarmupMainConfig& config) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "tessel-warmup: %s\n",
                 std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (flags->version) {
    std::printf("%s\n", VersionLine("tessel-warmup").c_str());
    return 0;
  }
  if (flags->list_kernels) {
    for (const std::string& name : config.registry->Names()) {
      std::printf("%s\n", name.c_str());
    }
    return 0;
  }
  if (flags->manifest.empty() || flags->archs.empty()) {
    std::fprintf(stderr,
                 "tessel-warmup: --manifest and --arch are required; see "
                 "--help\n");
    return 2;
  }
  absl::StatusOr<Manifest> manifest = LoadManifest(flags->manifest);
  if (!manifest.ok()) {
    std::fprintf(stderr, "tessel-warmup: %s\n",
                 std::string(manifest.status().message()).c_str());
    return 2;
  }
  for (const std::string& arch : flags->archs) {
    if (absl::Status s = CheckSupportedArch(arch); !s.ok()) {
      std::fprintf(stderr, "tessel-warmup: --arch %s: %s\n", arch.c_str(),
                   std::string(s.message()).c_str());
      return 2;
    }
  }
  absl::StatusOr<ManifestPrograms> programs =
      BuildManifestPrograms(*manifest, *config.registry, flags->archs);
  if (!programs.ok()) {
    std::fprintf(stderr, "tessel-warmup: %s: %s\n", flags->manifest.c_str(),
                 std::string(programs.status().message()).c_str());
    return 2;
  }
  WarmupOptions options;
  options.archs = flags->archs;
  options.jobs = flags->jobs > 0
                     ? flags->jobs
                     : std::max(1u, std::thread::hardware_concurrency());
  options.cache_dir = flags->cache_dir;
  options.dry_run = flags->dry_run;
  options.shard = flags->shard;
  options.timeout = absl::Seconds(flags->timeout_seconds);
  options.lower = config.lower;
  options.child_hook_for_testing = config.child_hook_for_testing;

  const bool bar = flags->progress == "bar" ||
                   (flags->progress == "auto" && ::isatty(STDOUT_FILENO));
  ConsoleProgress progress(stdout, bar);
  absl::StatusOr<WarmupReport> report =
      RunWarmup(*manifest, *programs, options, &progress);
  if (!report.ok()) {
    std::fprintf(stderr, "tessel-warmup: %s\n",
                 std::string(report.status().message()).c_str());
    return 2;
  }
  std::fputs(FormatSummary(*report).c_str(), stdout);
  std::fflush(stdout);
  return report->ok() ? 0 : 1;
}

}  // namespace tools

int WarmupMain(int argc, char** argv) {
  return tools::WarmupMainWithConfig(argc, argv, tools::WarmupMainConfig{});
}

}  // namespace tessel
