#include "jit/ptx_compile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "jit/counters.h"
#include "jit/cuda_paths.h"
#include "jit/failed_source.h"
#include "jit/subprocess.h"

namespace tessel::jit {
namespace {

std::string Trimmed(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log;
}

// Quotes the PTX lines ptxas names ("ptxas add1.ptx, line 12; error ...").
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

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// A folder of its own for one compile (mkdtemp, mode 0700), removed with
// everything in it when this goes out of scope, whatever happened.
class TempFolder {
 public:
  static absl::StatusOr<TempFolder> Create() {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                     "/tessel-ptxas-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat(
          "cannot create a temp folder ", pattern, ": ", std::strerror(errno)));
    }
    return TempFolder(std::move(pattern));
  }
  TempFolder(TempFolder&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  TempFolder& operator=(TempFolder&&) = delete;
  TempFolder(const TempFolder&) = delete;
  ~TempFolder() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteNewFile(const std::string& path, absl::string_view data) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  errno = 0;
  int error = WriteAll(fd, data) ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

}  // namespace

std::vector<std::string> PtxasOptions(const CompileOptions& options,
                                      const std::string& arch) {
  std::vector<std::string> flags = {"-arch=" + arch};
  if (options.lineinfo) flags.push_back("-lineinfo");
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

absl::StatusOr<std::string> PtxasPath() {
  const char* env = std::getenv("TESSEL_PTXAS");
  if (env != nullptr && *env != '\0') {
    if (IsExecutableFile(env)) return std::string(env);
    return absl::FailedPreconditionError(
        absl::StrCat("no ptxas: $TESSEL_PTXAS is ", env,
                     ", which is not an executable file"));
  }
  const std::string root = CudaToolkitRoot();
  if (root.empty()) {
    return absl::FailedPreconditionError(
        "no ptxas: $TESSEL_PTXAS is not set and no CUDA toolkit was found "
        "($CUDA_HOME, $CUDA_PATH, nor the one tessel was built against " +
        std::string(TESSEL_CUDA_INCLUDE_DIR) +
        " has include/cuda_fp16.h); set TESSEL_PTXAS to ptxas's path");
  }
  const std::string path = (std::filesystem::path(root) / "bin" / "ptxas");
  if (IsExecutableFile(path)) return path;
  return absl::FailedPreconditionError(
      absl::StrCat("no ptxas: $TESSEL_PTXAS is not set and ", path,
                   " is not an executable file; set TESSEL_PTXAS to "
                   "ptxas's path"));
}

absl::StatusOr<std::string> KnownPtxasPath() {
  // Asked on every lowering and cache lookup: the answer is kept for the
  // variables that choose the ptxas (a toolkit's files do not come and go
  // mid-process; the variables may, and a change of one looks again).
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  };
  std::string where = absl::StrCat(env("TESSEL_PTXAS"), "\n", env("CUDA_HOME"),
                                   "\n", env("CUDA_PATH"));
  static absl::Mutex mu(absl::kConstInit);
  // Guarded by mu.
  static auto* const asked = new std::optional<std::string>;
  static auto* const answer = new absl::StatusOr<std::string>;
  absl::MutexLock lock(&mu);
  if (*asked != where) {
    *answer = PtxasPath();
    *asked = std::move(where);
  }
  return *answer;
}

bool PtxasAvailable() { return KnownPtxasPath().ok(); }

absl::StatusOr<Cubin> CompilePtx(const CudaSource& source,
                                 const CompileOptions& options,
                                 const std::string& arch) {
  const auto start = std::chrono::steady_clock::now();
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
  const std::vector<std::string> flags = PtxasOptions(options, arch);
  const std::string what =
      absl::StrCat("PTX kernel '", source.entry, "' for ", arch,
                   " (options: ", absl::StrJoin(flags, " "), ")");
  absl::StatusOr<std::string> ptxas = PtxasPath();
  if (!ptxas.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot compile ", what, ": ", ptxas.status().message()));
  }

  absl::StatusOr<TempFolder> folder = TempFolder::Create();
  if (!folder.ok()) return folder.status();
  // Named after the entry: ptxas names the file in its log.
  const std::string input =
      absl::StrCat(folder->path(), "/", internal::SourceFileName(source));
  const std::string output = absl::StrCat(folder->path(), "/out.cubin");
  if (absl::Status written = WriteNewFile(input, source.text); !written.ok()) {
    return written;
  }
  std::vector<std::string> argv = {*ptxas};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {input, "-o", output});

  // The fork lock (internal::LockCompilesForFork) is not needed for the
  // spawn itself: posix_spawn is vfork and exec, so ptxas inherits none of
  // NVRTC's state, half done or not, and no lock. Compile holds it shared
  // around this call anyway, as for NVRTC; that also keeps an isolated
  // compile's fork() from landing while ptxas's pipe is open in this
  // process, which would hold the pipe open (and this read waiting) until
  // that child exits. The isolated child itself runs this too: posix_spawn
  // from a forked child is fine.
  internal::Count(internal::Counter::kNvrtcCompiles);
  absl::StatusOr<ProgramRun> run = RunProgram(argv);
  if (!run.ok()) {
    return absl::Status(
        run.status().code(),
        absl::StrCat("cannot compile ", what, ": ", run.status().message()));
  }
  // The log names the input by its path; the folder is gone by the time
  // anyone reads it.
  const std::string log = Trimmed(absl::StrReplaceAll(
      run->output, {{absl::StrCat(folder->path(), "/"), ""}}));
  if (WIFSIGNALED(run->wait_status)) {
    return absl::InternalError(absl::StrCat(
        "ptxas (", *ptxas, ") was killed by ",
        SignalText(WTERMSIG(run->wait_status)), " compiling ", what, "\nlog:\n",
        log, "\nfull source: ", internal::SaveFailedSource(source)));
  }
  if (!WIFEXITED(run->wait_status) || WEXITSTATUS(run->wait_status) != 0) {
    std::string message = absl::StrCat(
        "ptxas could not compile ", what, ": exit status ",
        WIFEXITED(run->wait_status) ? WEXITSTATUS(run->wait_status) : -1, "\n");
    const std::string quoted = QuotePtxLines(log, source);
    if (!quoted.empty()) absl::StrAppend(&message, "PTX lines:\n", quoted);
    absl::StrAppend(&message, "log:\n", log,
                    "\nfull source: ", internal::SaveFailedSource(source));
    return absl::InvalidArgumentError(message);
  }
  absl::StatusOr<std::string> image = ReadWholeFile(output);
  if (!image.ok() || image->empty()) {
    return absl::InternalError(absl::StrCat(
        "ptxas (", *ptxas, ") exited 0 but produced no cubin for ", what, ": ",
        image.ok() ? "the file is empty" : image.status().message(), "\nlog:\n",
        log));
  }
  if (!ImageNamesEntry(*image, source.entry)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry '", source.entry,
        "' is not a .entry of the PTX module (compiled for ", arch, ")"));
  }
  Cubin cubin;
  cubin.image = *std::move(image);
  cubin.lowered_entry = source.entry;
  cubin.arch = arch;
  cubin.log = log;
  cubin.compile_ms = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return cubin;
}

}  // namespace tessel::jit
