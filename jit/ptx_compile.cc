#include "jit/ptx_compile.h"

#include <nvJitLink.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "jit/counters.h"
#include "jit/failed_source.h"

namespace tessel::jit {
namespace {

// nvJitLink has no error-string call.
const char* ResultName(nvJitLinkResult result) {
  switch (result) {
    case NVJITLINK_SUCCESS:
      return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
      return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH:
      return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT:
      return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE:
      return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_INTERNAL:
      return "NVJITLINK_ERROR_INTERNAL";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH:
      return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH:
      return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    default:
      return "nvJitLink error";
  }
}

class Linker {
 public:
  Linker() = default;
  ~Linker() {
    if (handle_ != nullptr) nvJitLinkDestroy(&handle_);
  }
  Linker(const Linker&) = delete;
  Linker& operator=(const Linker&) = delete;
  nvJitLinkHandle* out() { return &handle_; }
  nvJitLinkHandle get() const { return handle_; }

 private:
  nvJitLinkHandle handle_ = nullptr;
};

std::string Trimmed(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log;
}

std::string ErrorLog(nvJitLinkHandle handle) {
  size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS ||
      size <= 1) {
    return "";
  }
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return "";
  return Trimmed(std::move(log));
}

std::string InfoLog(nvJitLinkHandle handle) {
  size_t size = 0;
  if (nvJitLinkGetInfoLogSize(handle, &size) != NVJITLINK_SUCCESS ||
      size <= 1) {
    return "";
  }
  std::string log(size, '\0');
  if (nvJitLinkGetInfoLog(handle, log.data()) != NVJITLINK_SUCCESS) return "";
  return Trimmed(std::move(log));
}

// Quotes the PTX lines ptxas names ("ptxas ..., line 12; error   : ...").
std::string QuotePtxLines(const std::string& log, const CudaSource& source) {
  std::vector<int> numbers;
  std::set<int> seen;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.find(", line ");
    if (at == absl::string_view::npos) continue;
    absl::string_view rest = line.substr(at + 7);
    const size_t end = rest.find_first_not_of("0123456789");
    int number = 0;
    if (end == 0 || end == absl::string_view::npos || rest[end] != ';' ||
        !absl::SimpleAtoi(rest.substr(0, end), &number)) {
      continue;
    }
    if (seen.insert(number).second) numbers.push_back(number);
    if (numbers.size() >= 12) break;
  }
  const std::string file = internal::SourceFileName(source);
  const std::vector<absl::string_view> lines =
      absl::StrSplit(source.text, '\n');
  std::string quoted;
  for (int number : numbers) {
    if (number < 1 || number > static_cast<int>(lines.size())) continue;
    absl::StrAppendFormat(&quoted, "  %s:%d | %s\n", file, number,
                          lines[number - 1]);
  }
  return quoted;
}

// The cubin's string table holds each function's name between NULs: a
// missing entry is caught here, not at load time on a GPU.
bool ImageNamesEntry(const std::string& image, const std::string& entry) {
  return absl::StrContains(image,
                           absl::StrCat(absl::string_view("\0", 1), entry,
                                        absl::string_view("\0", 1)));
}

}  // namespace

std::vector<std::string> PtxLinkOptions(const CompileOptions& options,
                                        const std::string& arch) {
  std::vector<std::string> flags = {"-arch=" + arch};
  if (options.lineinfo) flags.push_back("-lineinfo");
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

std::string NvJitLinkVersion() {
  unsigned major = 0, minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

absl::StatusOr<Cubin> CompilePtx(const CudaSource& source,
                                 const CompileOptions& options,
                                 const std::string& arch) {
  if (source.entry.empty()) {
    return absl::InvalidArgumentError(
        "CudaSource::entry is empty: name the PTX .entry to load");
  }
  if (!source.headers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PTX kernel '", source.entry, "' has ", source.headers.size(),
        " header(s) (the first: ", source.headers[0].name,
        "): a PTX module is whole, give it no CudaSource::headers"));
  }
  const std::vector<std::string> flags = PtxLinkOptions(options, arch);
  std::vector<const char*> flag_ptrs;
  for (const std::string& flag : flags) flag_ptrs.push_back(flag.c_str());
  const std::string what =
      absl::StrCat("PTX kernel '", source.entry, "' for ", arch,
                   " (options: ", absl::StrJoin(flags, " "), ")");

  const auto start = std::chrono::steady_clock::now();
  Linker linker;
  nvJitLinkResult result = nvJitLinkCreate(
      linker.out(), static_cast<uint32_t>(flag_ptrs.size()), flag_ptrs.data());
  if (result != NVJITLINK_SUCCESS) {
    // A bad arch or flag: nvJitLink says which only through the result.
    return absl::InvalidArgumentError(absl::StrCat(
        "nvJitLink refused the options of ", what, ": ", ResultName(result)));
  }
  internal::Count(internal::Counter::kNvrtcCompiles);
  const std::string file = internal::SourceFileName(source);
  // With its NUL: nvJitLink reads PTX as a C string.
  result =
      nvJitLinkAddData(linker.get(), NVJITLINK_INPUT_PTX, source.text.c_str(),
                       source.text.size() + 1, file.c_str());
  if (result == NVJITLINK_SUCCESS) result = nvJitLinkComplete(linker.get());
  if (result != NVJITLINK_SUCCESS) {
    const std::string log = ErrorLog(linker.get());
    std::string message = absl::StrCat("nvJitLink could not compile ", what,
                                       ": ", ResultName(result), "\n");
    const std::string quoted = QuotePtxLines(log, source);
    if (!quoted.empty()) absl::StrAppend(&message, "PTX lines:\n", quoted);
    absl::StrAppend(&message, "log:\n", log,
                    "\nfull source: ", internal::SaveFailedSource(source));
    return absl::InvalidArgumentError(message);
  }
  size_t size = 0;
  result = nvJitLinkGetLinkedCubinSize(linker.get(), &size);
  if (result != NVJITLINK_SUCCESS || size == 0) {
    return absl::InternalError(absl::StrCat("nvJitLink produced no cubin for ",
                                            what, ": ", ResultName(result)));
  }
  Cubin cubin;
  cubin.image.resize(size);
  result = nvJitLinkGetLinkedCubin(linker.get(), cubin.image.data());
  if (result != NVJITLINK_SUCCESS) {
    return absl::InternalError(absl::StrCat(
        "nvJitLinkGetLinkedCubin failed for ", what, ": ", ResultName(result)));
  }
  if (!ImageNamesEntry(cubin.image, source.entry)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry '", source.entry,
        "' is not a .entry of the PTX module (compiled for ", arch, ")"));
  }
  cubin.lowered_entry = source.entry;
  cubin.arch = arch;
  cubin.log = InfoLog(linker.get());
  cubin.compile_ms = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return cubin;
}

}  // namespace tessel::jit
