// tessel-aot's command line: manifest entries -> cubins per arch -> one
// header and one source of typed launch functions (docs/aot.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/runtime/aot_plan.h"
#include "tessel/aot.h"
#include "tessel/registry.h"
#include "tools/aot/aot_codegen.h"
#include "tools/cli.h"
#include "tools/manifest.h"

namespace tessel {
namespace tools {
namespace {

constexpr char kUsage[] =
    R"(usage: tessel-aot --manifest FILE --arch ARCH[,ARCH...] --out-dir DIR
                 [--name STEM] [--kernels NAME[,NAME...]] [--namespace NS]

Compiles the manifest's kernels for each arch as tessel's JIT does (PTX
emitter + ptxas, or NVRTC) and writes DIR/STEM.h, one typed launch function
per kernel, and DIR/STEM.cc, the cubins and the functions' bodies, for
tessel::aot_runtime (no NVRTC at run time). Files whose text is unchanged
are not rewritten.

  --manifest FILE    the kernels (docs/warmup.md's format)
  --arch LIST        archs to compile for, e.g. sm_90a,sm_80; at run time the
                     device's own is picked
  --out-dir DIR      where the two files go (created)
  --name STEM        the files' name (default: tessel_kernels)
  --kernels LIST     only the manifest entries of these kernel names
  --namespace NS     the functions' C++ namespace (default: global)
  --list-kernels     print the registered kernel names and exit
  --help, --version

A kernel's function is named after it; entries that share a name are told
apart by their params (gemm_K_256_M_256_N_256). Exit status: 0 written;
1 a kernel failed to compile; 2 a usage or manifest error.
)";

struct Flags {
  std::string manifest, out_dir, name = "tessel_kernels", name_space;
  std::vector<std::string> archs, kernels;
  bool list = false, help = false, version = false;
};

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  for (absl::string_view s : absl::StrSplit(v, ',', absl::SkipEmpty())) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.emplace_back(s);
  }
  return out;
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  const std::vector<std::string> known = {
      "--manifest",  "--arch", "--out-dir", "--name",        "--kernels",
      "--namespace", "--help", "--version", "--list-kernels"};
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    bool has_value = false;
    if (size_t eq = name.find('=');
        name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "--help" || name == "-h" || name == "--version" ||
        name == "--list-kernels") {
      if (has_value)
        return absl::InvalidArgumentError(name + " takes no value");
      (name == "--version"        ? f.version
       : name == "--list-kernels" ? f.list
                                  : f.help) = true;
      continue;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag \"", name, "\"", DidYouMean(name, known)));
    }
    if (!has_value) {
      if (i + 1 >= argc)
        return absl::InvalidArgumentError(name + ": missing its value");
      value = argv[++i];
    }
    if (value.empty())
      return absl::InvalidArgumentError(name + ": the value is empty");
    if (name == "--manifest") f.manifest = value;
    if (name == "--out-dir") f.out_dir = value;
    if (name == "--name") f.name = value;
    if (name == "--namespace") f.name_space = value;
    if (name == "--arch") {
      for (const std::string& a : SplitList(value))
        if (std::find(f.archs.begin(), f.archs.end(), a) == f.archs.end())
          f.archs.push_back(a);
    }
    if (name == "--kernels") {
      for (const std::string& k : SplitList(value)) f.kernels.push_back(k);
    }
  }
  if (f.help || f.version || f.list) return f;
  if (f.manifest.empty())
    return absl::InvalidArgumentError("--manifest is required");
  if (f.archs.empty()) return absl::InvalidArgumentError("--arch is required");
  if (f.out_dir.empty())
    return absl::InvalidArgumentError("--out-dir is required");
  for (const std::string& arch : f.archs) {
    if (absl::Status s = CheckSupportedArch(arch); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat("--arch: ", s.message()));
  }
  if (CppIdentifier(f.name) != f.name)
    return absl::InvalidArgumentError(
        absl::StrCat("--name ", f.name, ": not a C++ identifier"));
  for (absl::string_view part : absl::StrSplit(f.name_space, "::")) {
    if (!f.name_space.empty() && CppIdentifier(std::string(part)) != part)
      return absl::InvalidArgumentError(absl::StrCat(
          "--namespace ", f.name_space, ": not a C++ namespace name"));
  }
  return f;
}

// "gemm" when the name is one entry's; "gemm_M_256_N_256" (its params,
// then its index if those do not tell it apart) when several share it.
std::vector<std::string> FunctionNames(const std::vector<ManifestEntry>& e) {
  std::map<std::string, int> count;
  for (const ManifestEntry& m : e) ++count[m.name];
  std::vector<std::string> names;
  for (const ManifestEntry& m : e) {
    std::string name = m.name;
    if (count[m.name] > 1) {
      for (const auto& [key, value] : m.params.items()) {
        absl::StrAppend(
            &name, "_", key, "_",
            value.is_string() ? value.get<std::string>() : value.dump());
      }
    }
    names.push_back(CppIdentifier(name));
  }
  std::map<std::string, int> seen;
  for (const std::string& n : names) ++seen[n];
  for (size_t i = 0; i < names.size(); ++i) {
    if (seen[names[i]] > 1) absl::StrAppend(&names[i], "_", e[i].index);
  }
  return names;
}

// Writes `text` to `path` through a temp file and a rename, unless the file
// already holds it (a build then recompiles nothing).
absl::Status WriteIfChanged(const std::string& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream old;
    if (in && (old << in.rdbuf()) && old.str() == text) return absl::OkStatus();
  }
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      return absl::FailedPreconditionError(absl::StrCat("cannot write ", temp));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

int Run(const Flags& flags) {
  absl::StatusOr<Manifest> manifest = LoadManifest(flags.manifest);
  if (!manifest.ok()) {
    std::fprintf(stderr, "tessel-aot: %s\n",
                 std::string(manifest.status().message()).c_str());
    return 2;
  }
  if (!flags.kernels.empty()) {
    std::vector<ManifestEntry> kept;
    for (ManifestEntry& e : manifest->kernels) {
      if (std::find(flags.kernels.begin(), flags.kernels.end(), e.name) !=
          flags.kernels.end()) {
        kept.push_back(std::move(e));
      }
    }
    for (const std::string& k : flags.kernels) {
      if (std::none_of(kept.begin(), kept.end(),
                       [&](const ManifestEntry& e) { return e.name == k; })) {
        std::fprintf(stderr,
                     "tessel-aot: --kernels %s: %s lists no entry of it\n",
                     k.c_str(), flags.manifest.c_str());
        return 2;
      }
    }
    manifest->kernels = std::move(kept);
  }
  const std::vector<std::string> functions = FunctionNames(manifest->kernels);
  std::vector<AotKernel> kernels;
  bool failed = false;
  for (size_t i = 0; i < manifest->kernels.size(); ++i) {
    const ManifestEntry& e = manifest->kernels[i];
    AotKernel k{.function = functions[i], .description = e.Describe()};
    for (const std::string& arch : flags.archs) {  // the --arch order
      if (!e.archs.empty() &&
          std::find(e.archs.begin(), e.archs.end(), arch) == e.archs.end()) {
        continue;
      }
      // Built per arch, as the warmup builds it (the factory sizes tiles).
      absl::StatusOr<Program> program =
          KernelRegistry::Global().Build(e.name, e.params, Target::cuda(arch));
      if (!program.ok()) {
        std::fprintf(stderr, "tessel-aot: %s: %s (%s) for %s: %s\n",
                     flags.manifest.c_str(), e.Path().c_str(), e.name.c_str(),
                     arch.c_str(),
                     std::string(program.status().message()).c_str());
        return 2;
      }
      absl::StatusOr<runtime::AotKernelPlan> plan =
          runtime::PlanAot(*program, {.target = Target::cuda(arch),
                                      .pass_config = e.pass_config,
                                      .fast_math = e.fast_math,
                                      .lineinfo = e.lineinfo});
      if (!plan.ok()) {
        std::fprintf(stderr, "tessel-aot: %s %s for %s: %s\n", e.Path().c_str(),
                     e.Describe().c_str(), arch.c_str(),
                     std::string(plan.status().message()).c_str());
        failed = true;
        continue;
      }
      k.variants.push_back(*std::move(plan));
    }
    if (k.variants.empty() && !failed) {
      std::fprintf(stderr, "tessel-aot: %s %s: allows none of --arch %s\n",
                   e.Path().c_str(), e.Describe().c_str(),
                   absl::StrJoin(flags.archs, ",").c_str());
      return 2;
    }
    kernels.push_back(std::move(k));
  }
  if (failed) return 1;
  const std::string manifest_name =
      flags.manifest.substr(flags.manifest.find_last_of('/') + 1);
  absl::StatusOr<AotSources> sources =
      GenerateAotSources(kernels, {.header = flags.name,
                                   .name_space = flags.name_space,
                                   .manifest = manifest_name});
  if (!sources.ok()) {
    std::fprintf(stderr, "tessel-aot: %s\n",
                 std::string(sources.status().message()).c_str());
    return 2;
  }
  std::error_code error;
  std::filesystem::create_directories(flags.out_dir, error);
  if (error) {
    std::fprintf(stderr, "tessel-aot: cannot create %s: %s\n",
                 flags.out_dir.c_str(), error.message().c_str());
    return 2;
  }
  const std::string stem = absl::StrCat(flags.out_dir, "/", flags.name);
  for (const auto& [path, text] : {std::pair{stem + ".h", &sources->header},
                                   std::pair{stem + ".cc", &sources->source}}) {
    if (absl::Status s = WriteIfChanged(path, *text); !s.ok()) {
      std::fprintf(stderr, "tessel-aot: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
  }
  size_t cubins = 0;
  for (const AotKernel& k : kernels) cubins += k.variants.size();
  std::printf("tessel-aot: %zu kernels, %zu cubins -> %s.h, %s.cc\n",
              kernels.size(), cubins, stem.c_str(), stem.c_str());
  return 0;
}

}  // namespace
}  // namespace tools

int AotMain(int argc, char** argv) {
  absl::StatusOr<tools::Flags> flags = tools::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "tessel-aot: %s\n%s",
                 std::string(flags.status().message()).c_str(),
                 "run tessel-aot --help for the flags\n");
    return 2;
  }
  if (flags->help) {
    std::fputs(tools::kUsage, stdout);
    return 0;
  }
  if (flags->version) {
    std::printf("%s\n", tools::VersionLine("tessel-aot").c_str());
    return 0;
  }
  if (flags->list) {
    for (const std::string& n : KernelRegistry::Global().Names())
      std::printf("%s\n", n.c_str());
    return 0;
  }
  return tools::Run(*flags);
}

}  // namespace tessel
