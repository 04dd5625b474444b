#include "tools/manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nvrtc.h"
#include "tessel/compile.h"

namespace tessel::tools {
namespace {

using nlohmann::json;

// Errors of one file, reported together (at most kMaxErrors).
class ErrorList {
 public:
  static constexpr int kMaxErrors = 20;
  void Add(std::string error) {
    ++count_;
    if (errors_.size() < kMaxErrors) errors_.push_back(std::move(error));
  }
  bool empty() const { return count_ == 0; }
  absl::Status ToStatus(absl::string_view origin) const {
    std::string text = absl::StrJoin(errors_, "\n");
    if (count_ > errors_.size()) {
      absl::StrAppend(&text, "\n(", count_ - errors_.size(), " more errors)");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", count_ == 1 ? "" : "\n", text));
  }

 private:
  std::vector<std::string> errors_;
  size_t count_ = 0;
};

std::string Show(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = absl::StrCat(text.substr(0, 37), "...");
  return absl::StrCat(text, " (", value.type_name(), ")");
}

// "sm_80", "sm_90a", "sm_100a", "sm_100f"; not "sm_080" (as Target::cuda).
bool IsArch(absl::string_view arch) {
  if (arch.size() < 5 || arch.substr(0, 3) != "sm_") return false;
  absl::string_view rest = arch.substr(3);
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    rest.remove_suffix(1);
  }
  return rest.size() >= 2 && rest.size() <= 4 && rest[0] != '0' &&
         std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit);
}

// The archs this NVRTC compiles for (80, 90, ...), asked once.
const std::vector<int>& NvrtcArchs() {
  static const auto* archs = [] {
    auto* list = new std::vector<int>();
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
      list->resize(static_cast<size_t>(count));
      if (nvrtcGetSupportedArchs(list->data()) != NVRTC_SUCCESS) list->clear();
    }
    return list;
  }();
  return *archs;
}

void CheckFields(const json& object, const std::vector<std::string>& known,
                 const std::string& path, ErrorList& errors) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    errors.Add(absl::StrCat(path.empty() ? "" : absl::StrCat(path, "."), key,
                            ": unknown field (expected one of ",
                            absl::StrJoin(known, ", "), ")"));
  }
}

// PassConfig's switches by manifest name; cluster_size apart (an integer).
const std::vector<std::pair<const char*, bool PassConfig::*>>&
PassConfigSwitches() {
  static const auto* switches =
      new std::vector<std::pair<const char*, bool PassConfig::*>>{
          {"disable_tma_lower", &PassConfig::disable_tma_lower},
          {"disable_warp_specialized", &PassConfig::disable_warp_specialized},
          {"disable_async_copy", &PassConfig::disable_async_copy},
          {"disable_wgmma", &PassConfig::disable_wgmma},
          {"disable_persistent_grid", &PassConfig::disable_persistent_grid},
          {"pingpong_consumers", &PassConfig::pingpong_consumers},
          {"disable_tma_store_epilogue",
           &PassConfig::disable_tma_store_epilogue},
          {"consumer_gemm_turns", &PassConfig::consumer_gemm_turns},
          {"bulk_reduce_atomics", &PassConfig::bulk_reduce_atomics},
          {"wgmma_across_barriers", &PassConfig::wgmma_across_barriers},
          {"rebase_unrolled_nests", &PassConfig::rebase_unrolled_nests},
      };
  return *switches;
}

void ParsePassConfig(const json& value, const std::string& path,
                     PassConfig& config, ErrorList& errors) {
  if (!value.is_object()) {
    errors.Add(absl::StrCat(path, ": expected an object of pass switches, ",
                            "got ", Show(value)));
    return;
  }
  CheckFields(value, ManifestPassConfigFields(), path, errors);
  for (const auto& [field, member] : PassConfigSwitches()) {
    auto it = value.find(field);
    if (it == value.end()) continue;
    if (it->is_boolean()) {
      config.*member = it->get<bool>();
    } else {
      errors.Add(absl::StrCat(path, ".", field,
                              ": expected true or false, got ", Show(*it)));
    }
  }
  if (auto it = value.find("cluster_size"); it != value.end()) {
    if (it->is_number_integer() && (*it == 1 || *it == 2)) {
      config.cluster_size = it->get<int>();
    } else {
      errors.Add(absl::StrCat(path, ".cluster_size: expected 1 or 2, got ",
                              Show(*it)));
    }
  }
}

void ParseEntry(const json& value, int index, Manifest& manifest,
                ErrorList& errors) {
  ManifestEntry entry;
  entry.index = index;
  const std::string path = entry.Path();
  if (!value.is_object()) {
    errors.Add(absl::StrCat(path, ": expected an object, got ", Show(value)));
    return;
  }
  CheckFields(value, ManifestEntryFields(), path, errors);
  auto name = value.find("name");
  if (name == value.end()) {
    errors.Add(absl::StrCat(path, ".name: missing (expected a kernel name)"));
  } else if (!name->is_string() || name->get<std::string>().empty()) {
    errors.Add(absl::StrCat(path, ".name: expected a non-empty string, got ",
                            Show(*name)));
  } else {
    entry.name = name->get<std::string>();
  }
  if (auto params = value.find("params"); params != value.end()) {
    if (params->is_object()) {
      entry.params = *params;
    } else {
      errors.Add(absl::StrCat(path, ".params: expected an object, got ",
                              Show(*params)));
    }
  }
  if (auto archs = value.find("archs"); archs != value.end()) {
    if (!archs->is_array() || archs->empty()) {
      errors.Add(absl::StrCat(path, ".archs: expected a non-empty array of ",
                              "archs such as \"sm_90a\", got ", Show(*archs)));
    } else {
      for (size_t i = 0; i < archs->size(); ++i) {
        const json& arch = (*archs)[i];
        if (!arch.is_string() || !IsArch(arch.get<std::string>())) {
          errors.Add(absl::StrCat(path, ".archs[", i,
                                  "]: expected an arch such as \"sm_90a\", ",
                                  "got ", Show(arch)));
        } else if (absl::Status s = CheckSupportedArch(arch.get<std::string>());
                   !s.ok()) {
          errors.Add(absl::StrCat(path, ".archs[", i, "]: ", s.message()));
        } else {
          entry.archs.push_back(arch.get<std::string>());
        }
      }
    }
  }
  for (auto [field, flag] : {std::pair{"fast_math", &entry.fast_math},
                             std::pair{"lineinfo", &entry.lineinfo}}) {
    auto it = value.find(field);
    if (it == value.end()) continue;
    if (it->is_boolean()) {
      *flag = it->get<bool>();
    } else {
      errors.Add(absl::StrCat(path, ".", field,
                              ": expected true or false, got ", Show(*it)));
    }
  }
  if (auto config = value.find("pass_config"); config != value.end()) {
    ParsePassConfig(*config, absl::StrCat(path, ".pass_config"),
                    entry.pass_config, errors);
  }
  if (auto comment = value.find("comment");
      comment != value.end() && !comment->is_string()) {
    errors.Add(absl::StrCat(path, ".comment: expected a string, got ",
                            Show(*comment)));
  }
  manifest.kernels.push_back(std::move(entry));
}

// The first pass over the text, before any DOM is built: nesting depth
// bounded (the DOM's printing and destruction recurse), duplicate keys and
// numbers out of range reported with their JSON path, syntax errors with
// their byte. nlohmann's SAX parser itself does not recurse.
class CheckingSax {
 public:
  using json_t = json;
  static constexpr size_t kMaxDepth = 64;

  // "" while the text is sound; else the error, and `byte` for syntax.
  const std::string& error() const { return error_; }
  std::optional<size_t> byte() const { return byte_; }

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(json::number_integer_t) { return Value(); }
  bool number_unsigned(json::number_unsigned_t) { return Value(); }
  bool number_float(json::number_float_t, const std::string&) {
    return Value();
  }
  bool string(std::string&) { return Value(); }
  bool binary(json::binary_t&) { return Value(); }
  bool start_object(size_t) { return Open(/*object=*/true); }
  bool start_array(size_t) { return Open(/*object=*/false); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& key) {
    Frame& frame = stack_.back();
    if (!frame.keys.insert(key).second) {
      frame.key = key;
      return Fail(absl::StrCat(Path(),
                               ": duplicate key (each key may appear "
                               "once in an object)"));
    }
    frame.key = key;
    return true;
  }
  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    if (e.id == 406) {  // out_of_range: a number no double holds
      Value();
      return Fail(absl::StrCat(Path(), ": number ", token,
                               " is out of range (not a finite double)"));
    }
    byte_ = position;
    std::string what = e.what();
    // Drop "[json.exception.parse_error.101] parse error at line 1, ...:"
    if (size_t colon = what.rfind(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    return Fail(what);
  }

 private:
  struct Frame {
    bool object = false;
    std::string key;     // the current key of an object
    int64_t index = -1;  // the current element of an array
    std::set<std::string> keys;
  };

  // A value starts: in an array, it is the next element.
  bool Value() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  bool Open(bool object) {
    Value();
    if (stack_.size() >= kMaxDepth) {
      return Fail(absl::StrCat(Path(), ": nested deeper than ", kMaxDepth,
                               " levels (a manifest needs 4)"));
    }
    stack_.push_back(Frame{.object = object});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  bool Fail(std::string error) {
    if (error_.empty()) error_ = std::move(error);
    return false;
  }
  // "kernels[3].params.M"; "(top level)" outside every container.
  std::string Path() const {
    std::string path;
    for (const Frame& frame : stack_) {
      if (frame.object) {
        absl::StrAppend(&path, path.empty() ? "" : ".", frame.key);
      } else if (frame.index >= 0) {
        absl::StrAppend(&path, "[", frame.index, "]");
      }
    }
    if (path.size() > 60) path = absl::StrCat(path.substr(0, 57), "...");
    return path.empty() ? "(top level)" : path;
  }

  std::vector<Frame> stack_;
  std::string error_;
  std::optional<size_t> byte_;
};

// 1-based line and column of byte `offset` in `text`.
std::pair<int, int> LineColumn(absl::string_view text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

absl::Status CheckSupportedArch(absl::string_view arch) {
  if (!IsArch(arch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", arch, "\" is not an arch: expected sm_<NN>[a|f] such as sm_90a"));
  }
  int sm = 0;
  absl::string_view digits = arch.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
  for (char c : digits) sm = sm * 10 + (c - '0');
  if (sm < 80) {
    return absl::InvalidArgumentError(absl::StrCat(
        arch, " is older than sm_80, the oldest arch tessel compiles for"));
  }
  const std::vector<int>& supported = NvrtcArchs();
  if (std::find(supported.begin(), supported.end(), sm) == supported.end()) {
    std::vector<std::string> names;
    for (int known : supported) {
      if (known >= 80) names.push_back(absl::StrCat("sm_", known));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        arch,
        " is not an arch this CUDA toolkit's NVRTC compiles for (it "
        "supports ",
        names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }
  return absl::OkStatus();
}

std::string ManifestEntry::Path() const {
  return absl::StrCat("kernels[", index, "]");
}

std::string ManifestEntry::Describe() const {
  std::string out =
      params.empty() ? name : absl::StrCat(name, " ", params.dump());
  std::vector<std::string> set;
  for (const auto& [field, member] : PassConfigSwitches()) {
    if (pass_config.*member) set.push_back(field);
  }
  if (pass_config.cluster_size != 1) {
    set.push_back(absl::StrCat("cluster_size=", pass_config.cluster_size));
  }
  if (!set.empty()) absl::StrAppend(&out, " [", absl::StrJoin(set, " "), "]");
  return out;
}

const std::vector<std::string>& ManifestTopLevelFields() {
  static const auto* fields =
      new std::vector<std::string>{"$schema", "version", "comment", "kernels"};
  return *fields;
}

const std::vector<std::string>& ManifestEntryFields() {
  static const auto* fields = new std::vector<std::string>{
      "name",     "params",      "archs",  "fast_math",
      "lineinfo", "pass_config", "comment"};
  return *fields;
}

const std::vector<std::string>& ManifestPassConfigFields() {
  static const auto* fields = [] {
    auto* list = new std::vector<std::string>();
    for (const auto& [field, member] : PassConfigSwitches())
      list->push_back(field);
    list->push_back("cluster_size");
    return list;
  }();
  return *fields;
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text,
                                       absl::string_view origin) {
  CheckingSax check;
  json::sax_parse(text, &check);
  if (!check.error().empty()) {
    if (std::optional<size_t> byte = check.byte()) {
      // nlohmann's byte is one past the offending character.
      auto [line, column] = LineColumn(text, *byte == 0 ? 0 : *byte - 1);
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ":", line, ":", column, ": not valid JSON: ", check.error()));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", check.error()));
  }
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // the check above lets none through
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not valid JSON: ", e.what()));
  }
  ErrorList errors;
  Manifest manifest;
  if (!root.is_object()) {
    errors.Add(absl::StrCat("(top level): expected an object with a ",
                            "\"kernels\" array, got ", Show(root)));
    return errors.ToStatus(origin);
  }
  CheckFields(root, ManifestTopLevelFields(), "", errors);
  if (auto version = root.find("version"); version != root.end()) {
    if (!version->is_number_integer() ||
        version->get<int64_t>() != kManifestVersion) {
      errors.Add(absl::StrCat("version: expected ", kManifestVersion,
                              " (the only manifest version), got ",
                              Show(*version)));
    }
  }
  auto kernels = root.find("kernels");
  if (kernels == root.end()) {
    errors.Add("kernels: missing (expected an array of kernel entries)");
  } else if (!kernels->is_array()) {
    errors.Add(
        absl::StrCat("kernels: expected an array, got ", Show(*kernels)));
  } else {
    for (size_t i = 0; i < kernels->size(); ++i) {
      ParseEntry((*kernels)[i], static_cast<int>(i), manifest, errors);
    }
  }
  if (!errors.empty()) return errors.ToStatus(origin);
  return manifest;
}

absl::StatusOr<Manifest> LoadManifest(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status =
      std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the manifest ", path, " is a directory, not a JSON file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read the manifest ", path));
  }
  // At most kMaxManifestBytes (a FIFO or /dev/zero has no size to ask).
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxManifestBytes &&
         in.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the manifest ", path));
  }
  if (text.size() > kMaxManifestBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the manifest ", path, " is larger than ",
                     kMaxManifestBytes >> 20, " MiB"));
  }
  return ParseManifest(text, path);
}

absl::StatusOr<ManifestPrograms> BuildManifestPrograms(
    const Manifest& manifest, const KernelRegistry& registry,
    const std::vector<std::string>& archs) {
  ErrorList errors;
  ManifestPrograms programs(manifest.kernels.size());
  std::string unknown_hint;
  for (const ManifestEntry& entry : manifest.kernels) {
    if (!registry.Contains(entry.name)) {
      errors.Add(absl::StrCat(entry.Path(), ".name: unknown kernel \"",
                              entry.name, "\""));
      if (unknown_hint.empty()) {
        const std::vector<std::string> names = registry.Names();
        unknown_hint = absl::StrCat(
            "registered kernels: ",
            names.empty() ? "(none: is the registering code linked? see "
                            "docs/warmup.md)"
                          : absl::StrJoin(names, ", "));
      }
      continue;
    }
    // (arch, message) of each arch the factory refused.
    std::vector<std::pair<std::string, std::string>> failures;
    int tried = 0;
    for (const std::string& arch : archs) {
      if (!entry.archs.empty() &&
          std::find(entry.archs.begin(), entry.archs.end(), arch) ==
              entry.archs.end()) {
        continue;
      }
      ++tried;
      absl::StatusOr<Program> program =
          registry.Build(entry.name, entry.params, Target::cuda(arch));
      if (program.ok()) {
        programs[entry.index].emplace(arch, *std::move(program));
      } else {
        failures.emplace_back(arch, program.status().message());
      }
    }
    // A mistake in the entry fails every arch alike: said once. Otherwise
    // each failing arch is named.
    const bool alike =
        static_cast<int>(failures.size()) == tried &&
        std::all_of(failures.begin(), failures.end(), [&](const auto& f) {
          return f.second == failures.front().second;
        });
    for (size_t i = 0;
         i < (alike ? std::min<size_t>(1, failures.size()) : failures.size());
         ++i) {
      const auto& [arch, message] = failures[i];
      // Factory errors start at "params"; others get a separator.
      const bool has_path = absl::string_view(message).substr(0, 6) == "params";
      std::string error = has_path ? absl::StrCat(entry.Path(), ".", message)
                                   : absl::StrCat(entry.Path(), " (",
                                                  entry.name, "): ", message);
      if (!alike) absl::StrAppend(&error, " [", arch, "]");
      errors.Add(std::move(error));
    }
  }
  if (!unknown_hint.empty()) errors.Add(unknown_hint);
  if (!errors.empty()) return errors.ToStatus("manifest");
  return programs;
}

}  // namespace tessel::tools
