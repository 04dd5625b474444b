// The samples' flags: --key, --key value and --key=value alike; a mistyped
// flag is named with the closest known one.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "samples/sample_main.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

// Edits from a to b: insertions, deletions, substitutions and swaps of
// neighbours ("lsit" is one from "list"): the optimal string alignment
// distance.
// (tools/cli.cc has the tools' copy: samples use only the installed
// headers.)
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string DidYouMean(const std::string& key,
                       const std::set<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& k : known) {
    const size_t d = Distance(key, k);
    if (best == nullptr || d < best_distance) {
      best = &k;
      best_distance = d;
    }
  }
  if (best == nullptr || best_distance == 0 || best_distance > 3 ||
      best_distance * 3 > std::max(key.size(), best->size())) {
    return "";
  }
  return absl::StrCat(" (did you mean --", *best, "?)");
}

absl::StatusOr<Flags> Flags::Parse(int argc, char** argv) {
  std::map<std::string, std::string> values;
  std::set<std::string> bare;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.substr(0, 2) != "--" || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (flags are --key, ",
                       "--key value or --key=value)"));
    }
    arg = arg.substr(2);
    size_t eq = arg.find('=');
    std::string key = arg.substr(0, eq);
    std::string value =
        eq == std::string::npos ? "true" : std::string(arg.substr(eq + 1));
    // "--size small" as well as "--size=small", for every flag: samples take
    // no positional arguments, so a word after a flag is its value.
    if (eq == std::string::npos && i + 1 < argc &&
        std::string_view(argv[i + 1]).substr(0, 2) != "--") {
      value = argv[++i];
    } else if (eq == std::string::npos) {
      bare.insert(key);
    } else {
      bare.erase(key);
    }
    values[key] = value;
  }
  Flags flags = FromMap(std::move(values));
  flags.bare_ = std::move(bare);
  return flags;
}

Flags Flags::FromMap(std::map<std::string, std::string> values) {
  Flags f;
  for (auto& [k, v] : values) f.values_.emplace(k, v);
  return f;
}

bool Flags::Has(const std::string& key) const {
  used_.emplace(key);
  return values_.count(key) > 0;
}

std::string Flags::String(const std::string& key, std::string fallback,
                          std::optional<std::string> bare) const {
  used_.emplace(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (bare_.count(key)) {
    if (bare) return *bare;
    if (missing_value_.ok()) {
      missing_value_ = absl::InvalidArgumentError(
          absl::StrCat("--", key, " needs a value (--", key, "=...)"));
    }
    return fallback;
  }
  return it->second;
}

absl::StatusOr<int64_t> Flags::Int(const std::string& key,
                                   int64_t fallback) const {
  used_.emplace(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  int64_t v;
  if (!absl::SimpleAtoi(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", key, ": expected an integer, got \"", it->second, "\""));
  }
  return v;
}

absl::Status Flags::Ints(
    std::initializer_list<std::pair<const char*, int*>> fields) const {
  for (const auto& [key, field] : fields) {
    SAMPLES_ASSIGN_OR_RETURN(const int64_t v, Int(key, *field));
    if (v < INT32_MIN || v > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", key, ": ", v, " is out of range"));
    }
    *field = static_cast<int>(v);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Flags::OneOf(
    const std::string& key, const std::vector<std::string>& choices,
    std::string fallback, std::optional<std::string> bare) const {
  std::string value = String(key, std::move(fallback), std::move(bare));
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) {
    return value;
  }
  std::string expected =
      absl::StrJoin(choices.begin(), choices.end() - 1, ", ");
  if (choices.size() > 1) absl::StrAppend(&expected, " or ");
  absl::StrAppend(&expected, choices.back());
  return absl::InvalidArgumentError(
      absl::StrCat("--", key, "=", value, ": expected ", expected));
}

absl::StatusOr<bool> Flags::Bool(const std::string& key, bool fallback) const {
  used_.emplace(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  bool v;
  if (!absl::SimpleAtob(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", key, ": expected true or false, got \"", it->second, "\""));
  }
  return v;
}

absl::StatusOr<DataType> Flags::Dtype(const std::string& key,
                                      DataType fallback) const {
  used_.emplace(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::optional<DataType> t = dtype_from_name(it->second);
  if (!t) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", key, ": unknown dtype \"", it->second, "\" (f16, bf16, f32...)"));
  }
  return *t;
}

absl::Status Flags::CheckAllUsed() const {
  SAMPLES_RETURN_IF_ERROR(missing_value_);
  for (const auto& [k, v] : values_) {
    if (!used_.count(k)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", k, DidYouMean(k, used_)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, int64_t>> ParseDims(
    const std::string& spec, const std::vector<std::string>& names) {
  std::map<std::string, int64_t> dims;
  const std::string expected = absl::StrCat(
      "expected ", absl::StrJoin(names, "x"), " or ",
      absl::StrJoin(names, ",", [](std::string* out, const std::string& n) {
        absl::StrAppend(out, n, "=<n>");
      }));
  auto positive = [&](const std::string& text, int64_t* v) -> absl::Status {
    if (!absl::SimpleAtoi(text, v) || *v <= 0 || *v > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("--size=", spec, ": \"", text,
                       "\" is not a positive integer; ", expected));
    }
    return absl::OkStatus();
  };
  if (spec.find('=') == std::string::npos) {
    std::vector<std::string> parts = absl::StrSplit(spec, 'x');
    if (parts.size() != names.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--size=", spec, ": ", expected));
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      SAMPLES_RETURN_IF_ERROR(positive(parts[i], &dims[names[i]]));
    }
    return dims;
  }
  for (const std::string& part :
       std::vector<std::string>(absl::StrSplit(spec, ','))) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (std::find(names.begin(), names.end(), kv.first) == names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--size=", spec, ": unknown dimension \"", kv.first,
                       "\"; ", expected));
    }
    SAMPLES_RETURN_IF_ERROR(positive(kv.second, &dims[kv.first]));
  }
  for (const std::string& n : names) {
    if (!dims.count(n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--size=", spec, ": ", n, " is missing; ", expected));
    }
  }
  return dims;
}

}  // namespace tessel::samples
