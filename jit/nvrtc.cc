#include "jit/nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "jit/context.h"
#include "jit/counters.h"
#include "jit/cuda_paths.h"
#include "jit/failed_source.h"
#include "jit/ptx_compile.h"

namespace tessel::jit {
namespace {

absl::Mutex g_fork_mu(absl::kConstInit);

bool IsCubinArch(absl::string_view arch) {
  if (!absl::ConsumePrefix(&arch, "sm_")) return false;
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    arch.remove_suffix(1);
  }
  // "sm_080" is no arch NVRTC names (Target::cuda refuses it too).
  return arch.size() >= 2 && arch[0] != '0' &&
         std::all_of(arch.begin(), arch.end(), [](char c) {
           return absl::ascii_isdigit(static_cast<unsigned char>(c));
         });
}

class Program {
 public:
  Program() = default;
  ~Program() {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram* out() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

absl::Status NvrtcError(nvrtcResult result, absl::string_view call) {
  return absl::InternalError(
      absl::StrCat(call, " failed: ", nvrtcGetErrorString(result)));
}

// Quotes the lines the log points at ("name(12): error ...").
std::string QuoteOffendingLines(const std::string& log,
                                const std::string& program_name,
                                const CudaSource& source) {
  std::vector<std::pair<std::string, int>> refs;
  std::set<std::pair<std::string, int>> seen;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t open = line.find('(');
    if (open == absl::string_view::npos || open == 0) continue;
    const size_t close = line.find("):", open);
    if (close == absl::string_view::npos || close == open + 1) continue;
    absl::string_view digits = line.substr(open + 1, close - open - 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) {
          return absl::ascii_isdigit(static_cast<unsigned char>(c));
        })) {
      continue;
    }
    std::pair<std::string, int> ref(std::string(line.substr(0, open)),
                                    std::stoi(std::string(digits)));
    if (seen.insert(ref).second) refs.push_back(ref);
    if (refs.size() >= 12) break;
  }
  std::string quoted;
  for (const auto& [file, number] : refs) {
    const std::string* text = nullptr;
    if (file == program_name) text = &source.text;
    for (const CudaHeader& header : source.headers) {
      if (file == header.name) text = &header.content;
    }
    if (text == nullptr) continue;
    std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
    if (number < 1 || number > static_cast<int>(lines.size())) continue;
    absl::StrAppendFormat(&quoted, "  %s:%d | %s\n", file, number,
                          lines[number - 1]);
  }
  return quoted;
}

// NVRTC's precompiled headers: an automatic PCH is picked up again by a later
// compile in the process whose headers have the same names, even when their
// content differs (seen with CUDA 13.0: "using precompiled header file", then
// "has no member" for a function the new content declares), and tessel hands
// each kernel its own tessel_prelude.cuh under one name; a PCH file only
// works in the process that wrote it. Refused, so no compile reads another's.
absl::Status CheckNoPch(const std::vector<std::string>& extra) {
  for (const std::string& flag : extra) {
    absl::string_view name = flag;
    name = name.substr(0, name.find('='));
    while (absl::ConsumePrefix(&name, "-")) {
    }
    if (absl::StrContains(name, "pch")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CompileOptions::extra: ", flag,
          ": NVRTC precompiled headers are not supported (NVRTC reuses a PCH "
          "for headers of the same name whatever their content, and each "
          "tessel kernel has its own tessel_prelude.cuh)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Cubin> CompileResolved(const CudaSource& source,
                                      const CompileOptions& options,
                                      const std::string& arch) {
  if (absl::Status s = CheckNoPch(options.extra); !s.ok()) return s;
  if (source.entry.empty()) {
    return absl::InvalidArgumentError(
        "CudaSource::entry is empty: name the __global__ function to load");
  }
  if (source.language == SourceLanguage::kPtx) {
    return CompilePtx(source, options, arch);
  }
  const std::string program_name = internal::SourceFileName(source);
  std::vector<const char*> header_texts, header_names;
  for (const CudaHeader& header : source.headers) {
    header_texts.push_back(header.content.c_str());
    header_names.push_back(header.name.c_str());
  }
  const std::vector<std::string> flags = NormalizedOptions(options, arch);
  std::vector<std::string> all_flags = flags;
  for (const std::string& dir : CudaIncludeDirs()) {
    all_flags.push_back("-I" + dir);
  }
  std::vector<const char*> flag_ptrs;
  for (const std::string& flag : all_flags) flag_ptrs.push_back(flag.c_str());

  const auto start = std::chrono::steady_clock::now();
  Program program;
  nvrtcResult result = nvrtcCreateProgram(
      program.out(), source.text.c_str(), program_name.c_str(),
      static_cast<int>(header_texts.size()), header_texts.data(),
      header_names.data());
  if (result != NVRTC_SUCCESS) return NvrtcError(result, "nvrtcCreateProgram");
  result = nvrtcAddNameExpression(program.get(), source.entry.c_str());
  if (result != NVRTC_SUCCESS) {
    return NvrtcError(result, "nvrtcAddNameExpression");
  }
  internal::Count(internal::Counter::kNvrtcCompiles);
  const nvrtcResult compiled = nvrtcCompileProgram(
      program.get(), static_cast<int>(flag_ptrs.size()), flag_ptrs.data());
  size_t log_size = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(program.get(), &log_size) == NVRTC_SUCCESS &&
      log_size > 1) {
    log.resize(log_size);
    if (nvrtcGetProgramLog(program.get(), log.data()) != NVRTC_SUCCESS) {
      log.clear();
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
      log.pop_back();
    }
  }
  if (compiled != NVRTC_SUCCESS) {
    std::string message =
        absl::StrCat("NVRTC could not compile kernel '", source.entry, "' for ",
                     arch, " (", nvrtcGetErrorString(compiled),
                     ")\noptions: ", absl::StrJoin(flags, " "), "\n");
    const std::string quoted = QuoteOffendingLines(log, program_name, source);
    if (!quoted.empty()) absl::StrAppend(&message, "source lines:\n", quoted);
    absl::StrAppend(&message, "log:\n", log,
                    "\nfull source: ", internal::SaveFailedSource(source));
    return absl::InvalidArgumentError(message);
  }
  const char* lowered = nullptr;
  result = nvrtcGetLoweredName(program.get(), source.entry.c_str(), &lowered);
  if (result != NVRTC_SUCCESS || lowered == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("entry '", source.entry,
                     "' is not a __global__ function of the source: ",
                     nvrtcGetErrorString(result)));
  }
  Cubin cubin;
  cubin.lowered_entry = lowered;
  size_t size = 0;
  result = nvrtcGetCUBINSize(program.get(), &size);
  if (result != NVRTC_SUCCESS) return NvrtcError(result, "nvrtcGetCUBINSize");
  if (size == 0) {
    return absl::InternalError(
        absl::StrCat("NVRTC produced an empty cubin for ", arch));
  }
  cubin.image.resize(size);
  result = nvrtcGetCUBIN(program.get(), cubin.image.data());
  if (result != NVRTC_SUCCESS) return NvrtcError(result, "nvrtcGetCUBIN");
  cubin.arch = arch;
  cubin.log = std::move(log);
  cubin.compile_ms = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return cubin;
}

}  // namespace

absl::StatusOr<std::string> ResolveArch(const CompileOptions& options) {
  if (!options.arch.empty()) {
    if (!IsCubinArch(options.arch)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "arch '", options.arch,
          "' is not a real GPU arch: expected sm_<NN>[a|f], e.g. sm_90a"));
    }
    return options.arch;
  }
  // Detection is a few driver calls; remember it per context.
  static absl::Mutex mu(absl::kConstInit);
  static auto* detected = new std::vector<std::pair<void*, std::string>>;
  void* context = nullptr;
  if (absl::StatusOr<const DriverApi*> api = Driver(); api.ok()) {
    CUcontext current = nullptr;
    if ((*api)->cuCtxGetCurrent(&current) == CUDA_SUCCESS) context = current;
  }
  {
    absl::MutexLock lock(&mu);
    for (const auto& [ctx, arch] : *detected) {
      if (ctx == context) return arch;
    }
  }
  absl::StatusOr<std::string> arch =
      DetectArch(static_cast<CUcontext>(context));
  if (!arch.ok()) {
    return absl::Status(
        arch.status().code(),
        absl::StrCat("cannot detect the GPU arch (name one to compile "
                     "without a GPU: Target::cuda(\"sm_90a\"), or --arch "
                     "sm_90a for the tools): ",
                     arch.status().message()));
  }
  absl::MutexLock lock(&mu);
  detected->emplace_back(context, *arch);
  return *arch;
}

std::vector<std::string> NormalizedOptions(const CompileOptions& options,
                                           const std::string& arch) {
  std::vector<std::string> flags;
  flags.push_back("-arch=" + arch);
  flags.push_back("-std=" + (options.std.empty() ? "c++17" : options.std));
  if (options.fast_math) flags.push_back("--use_fast_math");
  if (options.lineinfo) flags.push_back("-lineinfo");
  std::vector<std::string> defines;
  for (const auto& [name, value] : options.defines) {
    defines.push_back(value.empty() ? absl::StrCat("-D", name)
                                    : absl::StrCat("-D", name, "=", value));
  }
  std::sort(defines.begin(), defines.end());
  defines.erase(std::unique(defines.begin(), defines.end()), defines.end());
  flags.insert(flags.end(), defines.begin(), defines.end());
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

std::vector<std::string> NormalizedOptionsFor(SourceLanguage language,
                                              const CompileOptions& options,
                                              const std::string& arch) {
  return language == SourceLanguage::kPtx ? PtxasOptions(options, arch)
                                          : NormalizedOptions(options, arch);
}

const char* SourceLanguageName(SourceLanguage language) {
  return language == SourceLanguage::kPtx ? "ptx" : "cuda";
}

std::vector<int> NvrtcSupportedSms() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> sms(n);
  if (nvrtcGetSupportedArchs(sms.data()) != NVRTC_SUCCESS) return {};
  return sms;
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

absl::StatusOr<Cubin> Compile(const CudaSource& source,
                              const CompileOptions& options) {
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  absl::ReaderMutexLock lock(&g_fork_mu);
  return CompileResolved(source, options, *arch);
}

namespace internal {
absl::StatusOr<Cubin> CompileInChild(const CudaSource& source,
                                     const CompileOptions& options) {
  if (!IsCubinArch(options.arch)) {
    return absl::InvalidArgumentError("isolated compiles need a resolved arch");
  }
  return CompileResolved(source, options, options.arch);
}

void LockCompilesForFork() ABSL_NO_THREAD_SAFETY_ANALYSIS { g_fork_mu.Lock(); }
void UnlockCompilesForFork() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  g_fork_mu.Unlock();
}
}  // namespace internal

}  // namespace tessel::jit
