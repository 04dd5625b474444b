#include "bench/nvrtc_phases.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tessel::bench {

absl::StatusOr<PhasedCubin> CompileWithPhases(const jit::CudaSource& source,
                                              jit::CompileOptions options) {
  // PTX goes to ptxas alone: the whole compile is its one phase.
  if (source.language == jit::SourceLanguage::kPtx) {
    absl::StatusOr<jit::Cubin> cubin = jit::Compile(source, options);
    if (!cubin.ok()) return cubin.status();
    PhasedCubin out{.cubin = *std::move(cubin)};
    out.ptxas_ms = out.cubin.compile_ms;
    return out;
  }
  std::string path =
      (std::filesystem::temp_directory_path() / "tessel-nvrtc-time-XXXXXX")
          .string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return absl::InternalError("mkstemp failed");
  ::close(fd);
  options.extra.push_back("--time=" + path);
  absl::StatusOr<jit::Cubin> cubin = jit::Compile(source, options);
  std::stringstream report;
  report << std::ifstream(path).rdbuf();
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!cubin.ok()) return cubin.status();
  // "File name, phase name, metric, unit" then one line per phase, in ms.
  PhasedCubin out{.cubin = *std::move(cubin)};
  int phases = 0;
  for (absl::string_view line : absl::StrSplit(report.str(), '\n')) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() < 4) continue;
    const absl::string_view phase = absl::StripAsciiWhitespace(fields[1]);
    double ms = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(fields[2]), &ms)) {
      continue;
    }
    if (phase == "CUDA C++ Frontend") {
      out.frontend_ms += ms;
    } else if (phase == "NVVM Optimizer") {
      out.nvvm_ms += ms;
    } else if (phase == "PTX Translation") {
      out.ptxas_ms += ms;
    } else {
      continue;
    }
    ++phases;
  }
  if (phases == 0) {
    return absl::InternalError(absl::StrCat(
        "NVRTC wrote no phase times (--time): '", report.str(), "'"));
  }
  return out;
}

}  // namespace tessel::bench
