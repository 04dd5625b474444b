#include "tools/cache_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "jit/cache_entry.h"
#include "jit/cache_files.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace tessel::tools {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "tessel-cache-archive 1";
// No header line is near this long; /dev/zero has no newline to stop at.
constexpr size_t kMaxLineBytes = 4096;

// Whether `bytes` is a sound entry stamped with the key its path names.
bool SoundEntryFor(absl::string_view bytes, const std::string& cubin_path) {
  absl::StatusOr<jit::DecodedEntry> entry = jit::ParseCacheEntry(bytes);
  return entry.ok() && entry->stamp.key == fs::path(cubin_path).stem().string();
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::ostringstream out;
  if (*ok) out << in.rdbuf();
  return out.str();
}

bool IsHex(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  return !s.empty();
}

// "v1/ab/ab....cubin": a version folder, the key's first two hex digits and
// the key's .cu, .json or .cubin. Nothing else may come out of an archive.
bool IsEntryPath(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  if (parts.size() != 3) return false;
  if (parts[0].size() < 2 || parts[0][0] != 'v') return false;
  for (char c : parts[0].substr(1)) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  if (parts[1].size() != 2 || !IsHex(parts[1])) return false;
  const size_t dot = parts[2].find('.');
  if (dot == absl::string_view::npos) return false;
  const absl::string_view key = parts[2].substr(0, dot);
  const absl::string_view ext = parts[2].substr(dot);
  return key.size() == 32 && IsHex(key) && key.substr(0, 2) == parts[1] &&
         (ext == ".cu" || ext == ".json" || ext == ".cubin");
}

// "programs/ab/ab...": a record of the program index (jit::DiskCache::
// RecordPath), named by its 32 hex digit key.
bool IsRecordPath(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  return parts.size() == 3 && parts[0] == "programs" && parts[1].size() == 2 &&
         IsHex(parts[1]) && parts[2].size() == 32 && IsHex(parts[2]) &&
         parts[2].substr(0, 2) == parts[1];
}

// Whether `bytes` is a record naming the key its path gives (what the index
// checks on every read; an archive carries nothing less).
bool SoundRecordFor(absl::string_view bytes, const std::string& path) {
  const nlohmann::json r =
      nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  const auto key = r.is_object() ? r.find("key") : r.end();
  return r.is_object() && key != r.end() && key->is_string() &&
         key->get<std::string>() == fs::path(path).filename().string();
}

// Temp file beside `path`, then rename: readers see nothing or the whole.
absl::Status WriteAtomically(const fs::path& path, absl::string_view bytes) {
  if (absl::Status s = jit::MakePrivateDirs(path.parent_path().string());
      !s.ok()) {
    return s;
  }
  return jit::WriteFileAtomically(path.string(), bytes);
}

// The archive is renamed into place: over a link, a device or a folder that
// would replace the thing itself, not write through it. Only a new file or a
// regular one is taken, in a folder that exists.
absl::Status CheckExportTarget(const std::string& archive_path) {
  if (archive_path.empty()) {
    return absl::InvalidArgumentError("export needs an archive file name");
  }
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(archive_path, ec);
  if (fs::is_symlink(status)) {
    return absl::InvalidArgumentError(absl::StrCat(
        archive_path,
        " is a symlink; export writes a new file in its place, so name the "
        "file itself"));
  }
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat(archive_path,
                     " exists and is not a regular file (a folder, device "
                     "or pipe); name a new archive file"));
  }
  const fs::path parent = fs::absolute(archive_path, ec).parent_path();
  if (ec || !fs::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the folder of ", archive_path, " does not exist; create it first"));
  }
  return absl::OkStatus();
}

// Reads `size` bytes in pieces, so that a declared size larger than what
// follows ends as a short read, not as an allocation of that size.
bool ReadExactly(std::istream& in, uint64_t size, std::string& out) {
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  out.clear();
  while (out.size() < size) {
    const size_t done = out.size();
    const size_t n = static_cast<size_t>(std::min(kPiece, size - done));
    out.resize(done + n);
    if (!in.read(out.data() + done, static_cast<std::streamsize>(n))) {
      return false;
    }
  }
  return true;
}

struct ArchiveFile {
  std::string path;  // under the cache root
  std::string bytes;
};

void HashFile(XXH3_state_t* state, const ArchiveFile& file) {
  XXH3_64bits_update(state, file.path.data(), file.path.size());
  XXH3_64bits_update(state, "\0", 1);
  XXH3_64bits_update(state, file.bytes.data(), file.bytes.size());
}

// std::getline, bounded: false at the end of the input, an error on a line
// longer than kMaxLineBytes (before reading it all).
absl::StatusOr<bool> ReadLine(std::istream& in, std::string& line) {
  line.clear();
  for (int c = in.get(); c != std::char_traits<char>::eof(); c = in.get()) {
    if (c == '\n') return true;
    if (line.size() == kMaxLineBytes) {
      return absl::DataLossError(
          absl::StrCat("a line longer than ", kMaxLineBytes, " bytes"));
    }
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

// Reads and checks the whole archive: every path, size and the checksum.
absl::StatusOr<std::vector<ArchiveFile>> ReadArchive(
    const std::string& archive_path) {
  std::error_code error;
  if (fs::is_directory(archive_path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(archive_path, " is a directory, not a cache archive"));
  }
  std::ifstream in(archive_path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", archive_path));
  }
  auto bad = [&](const std::string& why) {
    return absl::DataLossError(absl::StrCat(
        archive_path, ": not a whole tessel cache archive: ", why));
  };
  std::string line;
  absl::StatusOr<bool> first = ReadLine(in, line);
  if (!first.ok()) return bad(std::string(first.status().message()));
  if (!*first || line != kMagic) {
    return bad("the first line is not \"tessel-cache-archive 1\"");
  }
  std::vector<ArchiveFile> files;
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  struct Free {
    XXH3_state_t* s;
    ~Free() { XXH3_freeState(s); }
  } free_state{state};
  while (true) {
    absl::StatusOr<bool> more = ReadLine(in, line);
    if (!more.ok()) return bad(std::string(more.status().message()));
    if (!*more) break;
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() == 3 && fields[0] == "end") {
      int count = 0;
      if (!absl::SimpleAtoi(fields[1], &count) ||
          count != static_cast<int>(files.size())) {
        return bad("the file count does not match");
      }
      if (fields[2] != absl::StrFormat("%016x", XXH3_64bits_digest(state))) {
        return bad("the checksum does not match (damaged in transit?)");
      }
      return files;
    }
    uint64_t size = 0;
    if (fields.size() != 3 || fields[0] != "file" ||
        !absl::SimpleAtoi(fields[2], &size) ||
        size > static_cast<uint64_t>(jit::kMaxReadFileBytes)) {
      return bad(absl::StrCat("unexpected line \"", line.substr(0, 80), "\""));
    }
    if (!IsEntryPath(fields[1]) && !IsRecordPath(fields[1])) {
      return bad(absl::StrCat("refusing the path \"", fields[1], "\""));
    }
    ArchiveFile file{fields[1], ""};
    if (!ReadExactly(in, size, file.bytes) || in.get() != '\n') {
      return bad(absl::StrCat(fields[1], " is cut short"));
    }
    HashFile(state, file);
    files.push_back(std::move(file));
  }
  return bad("the end line is missing");
}

}  // namespace

absl::StatusOr<ArchiveStats> ExportCache(const jit::CacheDirectory& directory,
                                         const std::string& archive_path) {
  if (absl::Status s = CheckExportTarget(archive_path); !s.ok()) return s;
  absl::StatusOr<std::vector<jit::CacheEntryInfo>> entries = directory.List();
  if (!entries.ok()) return entries.status();
  ArchiveStats stats;
  std::string out = absl::StrCat(kMagic, "\n");
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  int files = 0;
  for (const jit::CacheEntryInfo& entry : *entries) {
    if (entry.cubin_path.empty()) continue;  // a leftover without its cubin
    bool ok = entry.problem.empty();         // untrusted files are not read
    const std::string cubin = ok ? ReadFile(entry.cubin_path, &ok) : "";
    if (!ok || !SoundEntryFor(cubin, entry.cubin_path)) {
      ++stats.skipped;
      continue;
    }
    for (const char* ext : {".cu", ".json", ".cubin"}) {
      const std::string path = directory.EntryPath(entry.key, ext);
      bool read = false;
      ArchiveFile file{
          fs::relative(path, directory.root()).generic_string(),
          std::string(ext) == ".cubin" ? cubin : ReadFile(path, &read)};
      if (std::string(ext) != ".cubin" && !read) continue;  // optional files
      absl::StrAppend(&out, "file ", file.path, " ", file.bytes.size(), "\n",
                      file.bytes, "\n");
      HashFile(state, file);
      stats.bytes += file.bytes.size();
      ++files;
    }
    ++stats.entries;
  }
  // The program index's records: what compile() needs to find a kernel
  // without lowering (trusted, whole ones only).
  std::error_code ec;
  std::vector<fs::path> records;
  for (const fs::directory_entry& shard :
       fs::directory_iterator(fs::path(directory.root()) / "programs", ec)) {
    std::error_code shard_ec;
    if (!shard.is_directory(shard_ec) || shard.is_symlink(shard_ec) ||
        !jit::UnsafeFolderReason(shard.path().string()).empty()) {
      continue;
    }
    for (const fs::directory_entry& file :
         fs::directory_iterator(shard.path(), shard_ec)) {
      records.push_back(file.path());
    }
  }
  std::sort(records.begin(), records.end());
  for (const fs::path& path : records) {
    ArchiveFile file{fs::relative(path, directory.root()).generic_string(), ""};
    bool read =
        IsRecordPath(file.path) && jit::UnsafeFileReason(path.string()).empty();
    if (read) file.bytes = ReadFile(path.string(), &read);
    if (!read || !SoundRecordFor(file.bytes, file.path)) continue;
    absl::StrAppend(&out, "file ", file.path, " ", file.bytes.size(), "\n",
                    file.bytes, "\n");
    HashFile(state, file);
    stats.bytes += file.bytes.size();
    ++stats.records;
    ++files;
  }
  absl::StrAppendFormat(&out, "end %d %016x\n", files,
                        XXH3_64bits_digest(state));
  XXH3_freeState(state);
  const fs::path target = fs::absolute(archive_path, ec);
  if (absl::Status s = jit::WriteFileAtomically(target.string(), out);
      !s.ok()) {
    return s;
  }
  return stats;
}

absl::StatusOr<ArchiveStats> ImportCache(const jit::CacheDirectory& directory,
                                         const std::string& archive_path) {
  absl::StatusOr<std::vector<ArchiveFile>> files = ReadArchive(archive_path);
  if (!files.ok()) return files.status();
  ArchiveStats stats;
  // Group by key: .cu and .json first, .cubin last (the archive's order).
  for (size_t i = 0; i < files->size();) {
    if (IsRecordPath((*files)[i].path)) {  // after the entries
      const ArchiveFile& record = (*files)[i++];
      const fs::path path = fs::path(directory.root()) / record.path;
      if (!SoundRecordFor(record.bytes, record.path)) continue;
      bool there = false;
      if (ReadFile(path.string(), &there) == record.bytes && there) continue;
      if (absl::Status s = WriteAtomically(path, record.bytes); !s.ok()) {
        return s;
      }
      stats.bytes += record.bytes.size();
      ++stats.records;
      continue;
    }
    const std::string stem = fs::path((*files)[i].path).stem().string();
    size_t end = i;
    while (end < files->size() &&
           fs::path((*files)[end].path).stem().string() == stem) {
      ++end;
    }
    const ArchiveFile* cubin = nullptr;
    for (size_t j = i; j < end; ++j) {
      if (absl::EndsWith((*files)[j].path, ".cubin")) cubin = &(*files)[j];
    }
    const size_t first = i;
    i = end;
    if (cubin == nullptr || !SoundEntryFor(cubin->bytes, cubin->path)) {
      continue;
    }
    const fs::path existing = fs::path(directory.root()) / cubin->path;
    if (directory.HasSoundEntry(fs::path(cubin->path).stem().string())) {
      ++stats.skipped;
      continue;
    }
    // The .cubin first: an import holds no key lock, and a .cu or .json
    // seen without its .cubin by a concurrent `verify` is an orphan it
    // removes. A .cubin without its sidecars is a whole entry already.
    if (absl::Status s = WriteAtomically(existing, cubin->bytes); !s.ok()) {
      return s;
    }
    stats.bytes += cubin->bytes.size();
    ++stats.entries;
    for (size_t j = first; j < end; ++j) {
      if (&(*files)[j] == cubin) continue;
      const fs::path path = fs::path(directory.root()) / (*files)[j].path;
      if (absl::Status s = WriteAtomically(path, (*files)[j].bytes); !s.ok()) {
        return s;
      }
      stats.bytes += (*files)[j].bytes.size();
    }
  }
  return stats;
}

}  // namespace tessel::tools
