// compile() latency over every kernel of a warmup manifest, each compiled
// as the manifest says the application does (its pass config and flags, the
// program built for --arch): the first compile in this process (lowering +
// codegen + NVRTC or a disk hit, or the program index's record and the cubin:
// first_path "index"), the repeat compile of the same program (the program
// memo), and the passes and CUDA codegen alone, repeated in this process (what
// a disk hit pays before the cache is asked: lower_us, passes_us, codegen_us),
// as JSON.
//
//   build/release/bench/compile_bench [--manifest samples/kernels.json]
//       [--arch sm_90a] [--reps 200] [--lower-reps 20] [--out FILE]
//
// Set TESSEL_CACHE_DIR to an empty folder for cold first compiles, or to
// one a tessel-warmup of the same manifest filled for warm ones. Needs no
// GPU. Never a test: it reports, it does not judge.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/median.h"
#include "jit/counters.h"
#include "nlohmann/json.hpp"
#include "tessel/compile.h"
#include "tessel/registry.h"
#include "tessel/runtime.h"
#include "tools/lowering.h"
#include "tools/manifest.h"

namespace {

using tessel::bench::Median;

template <typename F>
double Micros(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string manifest = "samples/kernels.json", arch = "sm_90a", out;
  int reps = 200, lower_reps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::string f = std::string(flag) + "=";
      if (a.rfind(f, 0) == 0) return argv[i] + f.size();
      if (a == flag && i + 1 < argc) return argv[++i];
      return nullptr;
    };
    if (const char* v = value("--manifest")) {
      manifest = v;
    } else if (const char* v = value("--arch")) {
      arch = v;
    } else if (const char* v = value("--reps")) {
      reps = std::max(1, std::atoi(v));
    } else if (const char* v = value("--lower-reps")) {
      lower_reps = std::max(0, std::atoi(v));
    } else if (const char* v = value("--out")) {
      out = v;
    } else {
      std::cerr << "usage: compile_bench [--manifest F] [--arch A] [--reps N] "
                   "[--lower-reps N] [--out F]\n";
      return 2;
    }
  }
  // Each entry as the application compiles it: its program built for
  // `arch`, its pass config and flags (a warmup keys them the same way).
  absl::StatusOr<tessel::tools::Manifest> m =
      tessel::tools::LoadManifest(manifest);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<tessel::tools::ManifestPrograms> programs =
      tessel::tools::BuildManifestPrograms(*m, tessel::KernelRegistry::Global(),
                                           {arch});
  if (!programs.ok()) {
    std::cerr << programs.status().message() << "\n";
    return 2;
  }
  nlohmann::json kernels = nlohmann::json::array();
  std::vector<double> firsts, repeats, lowers;
  for (size_t i = 0; i < m->kernels.size(); ++i) {
    const tessel::tools::ManifestEntry& entry = m->kernels[i];
    auto built = (*programs)[i].find(arch);
    if (built == (*programs)[i].end()) continue;  // listed for other archs
    const tessel::Program* program = &built->second;
    const tessel::CompileOptions options{.target = tessel::Target::cuda(arch),
                                         .pass_config = entry.pass_config,
                                         .fast_math = entry.fast_math,
                                         .lineinfo = entry.lineinfo};
    nlohmann::json record = {{"name", entry.name},
                             {"params", entry.params},
                             {"entry", entry.Describe()}};
    absl::StatusOr<tessel::CompiledKernel> k;
    const uint64_t index_hits = tessel::jit::GetJitCounters().index_hits;
    const double first =
        Micros([&] { k = tessel::compile(*program, options); });
    const bool indexed = tessel::jit::GetJitCounters().index_hits > index_hits;
    if (!k.ok()) {
      record["error"] = std::string(k.status().message());
      kernels.push_back(record);
      continue;
    }
    record["first_compile_ms"] = first / 1000;
    record["first_origin"] = k->cache_origin();
    // Who answered: the program index (no pass ran), the memo (an equal
    // program earlier in the manifest), or the passes.
    record["first_path"] = indexed ? "index"
                           : std::string(k->cache_origin()) == "memory"
                               ? "memo"
                               : "passes";
    std::vector<double> again;
    for (int r = 0; r < reps; ++r) {
      again.push_back(Micros([&] { k = tessel::compile(*program, options); }));
    }
    record["repeat_compile_us"] = Median(again);
    record["repeat_origin"] = k->cache_origin();
    std::vector<double> lower, passes, codegen;
    for (int r = 0; r < lower_reps; ++r) {
      absl::StatusOr<tessel::tools::LoweredKernel> l;
      lower.push_back(Micros([&] {
        l = tessel::tools::LowerWithCodegen(*program,
                                            {.arch = arch,
                                             .fast_math = entry.fast_math,
                                             .lineinfo = entry.lineinfo,
                                             .pass_config = entry.pass_config});
      }));
      if (!l.ok()) break;
      passes.push_back(l->passes_ms * 1000);
      codegen.push_back(l->codegen_ms * 1000);
    }
    if (!lower.empty()) {
      record["lower_us"] = Median(lower);
      record["passes_us"] = Median(passes);
      record["codegen_us"] = Median(codegen);
      lowers.push_back(Median(lower));
    }
    firsts.push_back(first / 1000);
    repeats.push_back(Median(again));
    kernels.push_back(record);
  }
  nlohmann::json report = {
      {"arch", arch},
      {"manifest", manifest},
      {"kernels", kernels},
      {"median_first_compile_ms", Median(firsts)},
      {"max_first_compile_ms",
       firsts.empty() ? 0 : *std::max_element(firsts.begin(), firsts.end())},
      {"median_repeat_compile_us", Median(repeats)},
      {"median_lower_us", Median(lowers)},
      {"max_repeat_compile_us",
       repeats.empty() ? 0
                       : *std::max_element(repeats.begin(), repeats.end())}};
  const std::string text = report.dump(2) + "\n";
  if (out.empty()) {
    std::cout << text;
  } else {
    std::ofstream(out) << text;
  }
  return 0;
}
