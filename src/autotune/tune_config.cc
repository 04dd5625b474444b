// TuneValue, TuneConfig and TuneSpace (include/tessel/autotune.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tessel/autotune.h"

namespace tessel {
namespace {

// A wrong-kind read is a bug in the caller's factory, not a user input.
[[noreturn]] void WrongKind(const char* wanted, const TuneValue& value) {
  std::fprintf(stderr, "tessel: TuneValue %s is not %s\n",
               value.ToString().c_str(), wanted);
  std::abort();
}

absl::Status KindError(std::string_view name, const char* wanted,
                       const TuneValue& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("tune config: \"", std::string(name), "\" is ",
                   value.ToString(), ", not ", wanted));
}

absl::Status Missing(std::string_view name) {
  return absl::NotFoundError(
      absl::StrCat("tune config: no parameter \"", std::string(name), "\""));
}

// Configs above this many are a mistake (a forgotten filter), not a plan.
constexpr uint64_t kMaxConfigs = 1'000'000;

}  // namespace

// ---------------------------------------------------------------- TuneValue

int64_t TuneValue::int_value() const {
  if (!is_int()) WrongKind("an integer", *this);
  return std::get<int64_t>(value_);
}

bool TuneValue::bool_value() const {
  if (!is_bool()) WrongKind("a bool", *this);
  return std::get<bool>(value_);
}

const std::string& TuneValue::string_value() const {
  if (!is_string()) WrongKind("a string", *this);
  return std::get<std::string>(value_);
}

std::string TuneValue::ToString() const {
  if (is_int()) return absl::StrCat(std::get<int64_t>(value_));
  if (is_bool()) return std::get<bool>(value_) ? "true" : "false";
  return std::get<std::string>(value_);
}

// ---------------------------------------------------------------- TuneConfig

TuneConfig::TuneConfig(
    std::initializer_list<std::pair<std::string, TuneValue>> values) {
  for (const auto& [name, value] : values) Set(name, value);
}

TuneConfig& TuneConfig::Set(std::string name, TuneValue value) {
  for (auto& [n, v] : values_) {
    if (n == name) {
      v = std::move(value);
      return *this;
    }
  }
  values_.emplace_back(std::move(name), std::move(value));
  return *this;
}

bool TuneConfig::Has(std::string_view name) const {
  return Find(name) != nullptr;
}

const TuneValue* TuneConfig::Find(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return &v;
  }
  return nullptr;
}

int64_t TuneConfig::Int(std::string_view name, int64_t fallback) const {
  const TuneValue* v = Find(name);
  return v == nullptr ? fallback : v->int_value();
}

bool TuneConfig::Bool(std::string_view name, bool fallback) const {
  const TuneValue* v = Find(name);
  return v == nullptr ? fallback : v->bool_value();
}

std::string TuneConfig::String(std::string_view name,
                               std::string fallback) const {
  const TuneValue* v = Find(name);
  return v == nullptr ? fallback : v->string_value();
}

absl::StatusOr<int64_t> TuneConfig::GetInt(std::string_view name) const {
  const TuneValue* v = Find(name);
  if (v == nullptr) return Missing(name);
  if (!v->is_int()) return KindError(name, "an integer", *v);
  return v->int_value();
}

absl::StatusOr<bool> TuneConfig::GetBool(std::string_view name) const {
  const TuneValue* v = Find(name);
  if (v == nullptr) return Missing(name);
  if (!v->is_bool()) return KindError(name, "a bool", *v);
  return v->bool_value();
}

absl::StatusOr<std::string> TuneConfig::GetString(std::string_view name) const {
  const TuneValue* v = Find(name);
  if (v == nullptr) return Missing(name);
  if (!v->is_string()) return KindError(name, "a string", *v);
  return v->string_value();
}

std::string TuneConfig::ToString() const {
  if (values_.empty()) return "(empty)";
  return absl::StrJoin(values_, " ", [](std::string* out, const auto& nv) {
    absl::StrAppend(out, nv.first, "=", nv.second.ToString());
  });
}

std::string TuneConfig::ToJson() const {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : values_) {
    if (value.is_int()) {
      json[name] = value.int_value();
    } else if (value.is_bool()) {
      json[name] = value.bool_value();
    } else {
      json[name] = value.string_value();
    }
  }
  return json.dump();
}

absl::StatusOr<TuneConfig> TuneConfig::FromJson(std::string_view text) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(
      text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tune config: not a JSON object: ", std::string(text.substr(0, 80))));
  }
  TuneConfig config;
  for (const auto& [name, value] : json.items()) {
    if (value.is_boolean()) {
      config.Set(name, value.get<bool>());
    } else if (value.is_number_integer()) {
      config.Set(name, value.get<int64_t>());
    } else if (value.is_string()) {
      config.Set(name, value.get<std::string>());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("tune config: \"", name, "\" is ", value.dump(),
                       "; values are integers, bools or strings"));
    }
  }
  return config;
}

bool operator==(const TuneConfig& a, const TuneConfig& b) {
  if (a.values_.size() != b.values_.size()) return false;
  for (const auto& [name, value] : a.values_) {
    const TuneValue* other = b.Find(name);
    if (other == nullptr || !(*other == value)) return false;
  }
  return true;
}

// ---------------------------------------------------------------- TuneSpace

TuneSpace TuneSpace::List(std::vector<TuneConfig> configs) {
  TuneSpace space;
  space.list_ = std::move(configs);
  return space;
}

TuneSpace TuneSpace::Product(std::vector<Axis> axes, Filter filter) {
  TuneSpace space;
  space.axes_ = std::move(axes);
  space.filter_ = std::move(filter);
  space.is_product_ = true;
  return space;
}

absl::StatusOr<std::vector<TuneConfig>> TuneSpace::Enumerate() const {
  std::vector<TuneConfig> configs;
  if (!is_product_) {
    configs = list_;
  } else {
    if (axes_.empty()) {
      return absl::InvalidArgumentError("tune space: the product has no axes");
    }
    uint64_t count = 1;
    for (size_t i = 0; i < axes_.size(); ++i) {
      const Axis& axis = axes_[i];
      if (axis.name.empty()) {
        return absl::InvalidArgumentError("tune space: an axis has no name");
      }
      if (axis.values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("tune space: axis \"", axis.name, "\" has no values"));
      }
      for (size_t j = 0; j < i; ++j) {
        if (axes_[j].name == axis.name) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tune space: axis \"", axis.name, "\" appears twice"));
        }
      }
      count *= axis.values.size();
      if (count > kMaxConfigs) {
        return absl::InvalidArgumentError(
            absl::StrCat("tune space: the product has more than ", kMaxConfigs,
                         " configs; use fewer values"));
      }
    }
    // Odometer order: the last axis turns fastest.
    std::vector<size_t> at(axes_.size(), 0);
    for (uint64_t n = 0; n < count; ++n) {
      TuneConfig config;
      for (size_t i = 0; i < axes_.size(); ++i) {
        config.Set(axes_[i].name, axes_[i].values[at[i]]);
      }
      if (!filter_ || filter_(config)) configs.push_back(std::move(config));
      for (size_t i = axes_.size(); i-- > 0;) {
        if (++at[i] < axes_[i].values.size()) break;
        at[i] = 0;
      }
    }
  }
  if (configs.empty()) {
    return absl::InvalidArgumentError(
        is_product_ ? "tune space: the filter rejected every config"
                    : "tune space: the list is empty");
  }
  if (configs.size() > kMaxConfigs) {
    return absl::InvalidArgumentError(
        absl::StrCat("tune space: more than ", kMaxConfigs, " configs"));
  }
  // Repeats would be timed twice and make the store ambiguous.
  std::vector<std::string> seen;
  seen.reserve(configs.size());
  for (const TuneConfig& c : configs) {
    TuneConfig sorted;
    std::vector<std::pair<std::string, TuneValue>> v = c.values();
    std::sort(v.begin(), v.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [name, value] : v) sorted.Set(name, value);
    seen.push_back(sorted.ToJson());
  }
  std::vector<std::string> sorted_seen = seen;
  std::sort(sorted_seen.begin(), sorted_seen.end());
  auto dup = std::adjacent_find(sorted_seen.begin(), sorted_seen.end());
  if (dup != sorted_seen.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tune space: the config ", *dup, " appears twice"));
  }
  return configs;
}

const char* TuneOutcomeName(TuneOutcome outcome) {
  switch (outcome) {
    case TuneOutcome::kTimed:
      return "timed";
    case TuneOutcome::kBuildFailed:
      return "build failed";
    case TuneOutcome::kCompileFailed:
      return "compile failed";
    case TuneOutcome::kCheckFailed:
      return "check failed";
    case TuneOutcome::kTimingFailed:
      return "timing failed";
    case TuneOutcome::kSkippedBudget:
      return "skipped (budget spent)";
  }
  return "?";
}

std::string TuneCandidate::ToString() const {
  std::string line =
      absl::StrCat("[", index + 1, "/", total, "] ", config.ToString(), ": ");
  if (outcome == TuneOutcome::kTimed) {
    char ms_text[32];
    std::snprintf(ms_text, sizeof(ms_text), "%.4g ms", ms);
    absl::StrAppend(&line, ms_text);
  } else if (outcome == TuneOutcome::kSkippedBudget) {
    absl::StrAppend(&line, TuneOutcomeName(outcome));
  } else {
    // The first line of the error: compiler logs run to pages.
    absl::string_view why = status.message();
    why = why.substr(0, std::min(why.find('\n'), size_t{240}));
    absl::StrAppend(&line, TuneOutcomeName(outcome), ": ", why,
                    why.size() < status.message().size() ? " ..." : "");
  }
  return line;
}

}  // namespace tessel
