#include "tools/manifest.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

// "sm_80", "sm_90a", "sm_100a".
bool IsArch(absl::string_view arch) {
  if (arch.size() < 5 || arch.substr(0, 3) != "sm_") return false;
  absl::string_view rest = arch.substr(3);
  if (!rest.empty() && rest.back() == 'a') rest.remove_suffix(1);
  return rest.size() >= 2 &&
         std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit);
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
  if (auto comment = value.find("comment");
      comment != value.end() && !comment->is_string()) {
    errors.Add(absl::StrCat(path, ".comment: expected a string, got ",
                            Show(*comment)));
  }
  manifest.kernels.push_back(std::move(entry));
}

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

std::string ManifestEntry::Path() const {
  return absl::StrCat("kernels[", index, "]");
}

std::string ManifestEntry::Describe() const {
  return params.empty() ? name : absl::StrCat(name, " ", params.dump());
}

const std::vector<std::string>& ManifestTopLevelFields() {
  static const auto* fields =
      new std::vector<std::string>{"$schema", "version", "comment", "kernels"};
  return *fields;
}

const std::vector<std::string>& ManifestEntryFields() {
  static const auto* fields = new std::vector<std::string>{
      "name", "params", "archs", "fast_math", "lineinfo", "comment"};
  return *fields;
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text,
                                       absl::string_view origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's byte is one past the offending character.
    auto [line, column] = LineColumn(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at ...:"
    if (size_t colon = what.find(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ":", line, ":", column, ": not valid JSON: ", what));
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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read the manifest ", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseManifest(text.str(), path);
}

absl::StatusOr<std::vector<Program>> BuildManifestPrograms(
    const Manifest& manifest, const KernelRegistry& registry) {
  ErrorList errors;
  std::vector<Program> programs;
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
      programs.emplace_back();
      continue;
    }
    absl::StatusOr<Program> program = registry.Build(entry.name, entry.params);
    if (!program.ok()) {
      // Factory errors start at "params"; others get a separator.
      const absl::string_view message = program.status().message();
      const bool has_path = message.substr(0, 6) == "params";
      errors.Add(has_path ? absl::StrCat(entry.Path(), ".", message)
                          : absl::StrCat(entry.Path(), " (", entry.name,
                                         "): ", message));
      programs.emplace_back();
      continue;
    }
    programs.push_back(*std::move(program));
  }
  if (!unknown_hint.empty()) errors.Add(unknown_hint);
  if (!errors.empty()) return errors.ToStatus("manifest");
  return programs;
}

}  // namespace tessel::tools
