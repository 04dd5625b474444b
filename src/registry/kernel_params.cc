#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tessel/registry.h"

namespace tessel {
namespace {

// A short rendering of a JSON value for error messages.
std::string Show(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = absl::StrCat(text.substr(0, 37), "...");
  return absl::StrCat(text, " (", value.type_name(), ")");
}

}  // namespace

KernelParams::KernelParams(const nlohmann::json& json, std::string path)
    : json_(json), path_(std::move(path)) {}

std::string KernelParams::PathOf(absl::string_view key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

absl::StatusOr<const nlohmann::json*> KernelParams::Find(
    absl::string_view key) const {
  used_.emplace(key);
  if (json_.is_null()) return nullptr;
  if (!json_.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": expected an object, got ", json_.type_name()));
  }
  auto it = json_.find(std::string(key));
  if (it == json_.end()) return nullptr;
  return &*it;
}

absl::StatusOr<int64_t> KernelParams::Int(absl::string_view key) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": missing (expected an integer)"));
  }
  const nlohmann::json& v = **value;
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat(PathOf(key), ": integer out of range"));
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return absl::InvalidArgumentError(
      absl::StrCat(PathOf(key), ": expected an integer, got ", Show(v)));
}

absl::StatusOr<double> KernelParams::Number(absl::string_view key) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": missing (expected a number)"));
  }
  if (!(*value)->is_number()) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": expected a number, got ", Show(**value)));
  }
  return (*value)->get<double>();
}

absl::StatusOr<bool> KernelParams::Bool(absl::string_view key) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": missing (expected true or false)"));
  }
  if (!(*value)->is_boolean()) {
    return absl::InvalidArgumentError(absl::StrCat(
        PathOf(key), ": expected true or false, got ", Show(**value)));
  }
  return (*value)->get<bool>();
}

absl::StatusOr<std::string> KernelParams::String(absl::string_view key) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": missing (expected a string)"));
  }
  if (!(*value)->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": expected a string, got ", Show(**value)));
  }
  return (*value)->get<std::string>();
}

absl::StatusOr<DataType> KernelParams::Dtype(absl::string_view key) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": missing (expected a dtype name)"));
  }
  absl::StatusOr<std::string> name = String(key);
  if (!name.ok()) return name.status();
  std::optional<DataType> dtype = dtype_from_name(*name);
  if (!dtype.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        PathOf(key), ": unknown dtype \"", *name,
        "\" (expected f16, bf16, f32, f64, i8, i32, fp8_e4m3, ...)"));
  }
  return *dtype;
}

// The defaulted reads: a missing key gives `fallback`, anything else goes
// through the required read.
#define TESSEL_PARAMS_WITH_FALLBACK(Type, Method)                  \
  absl::StatusOr<Type> KernelParams::Method(absl::string_view key, \
                                            Type fallback) const { \
    absl::StatusOr<const nlohmann::json*> value = Find(key);       \
    if (!value.ok()) return value.status();                        \
    if (*value == nullptr) return fallback;                        \
    return Method(key);                                            \
  }
TESSEL_PARAMS_WITH_FALLBACK(int64_t, Int)
TESSEL_PARAMS_WITH_FALLBACK(double, Number)
TESSEL_PARAMS_WITH_FALLBACK(bool, Bool)
TESSEL_PARAMS_WITH_FALLBACK(std::string, String)
TESSEL_PARAMS_WITH_FALLBACK(DataType, Dtype)
#undef TESSEL_PARAMS_WITH_FALLBACK

absl::StatusOr<int64_t> KernelParams::IntInRange(absl::string_view key,
                                                 int64_t lo, int64_t hi) const {
  absl::StatusOr<int64_t> value = Int(key);
  if (!value.ok()) return value;
  if (*value < lo || *value > hi) {
    return absl::InvalidArgumentError(absl::StrCat(
        PathOf(key), ": ", *value, " is outside [", lo, ", ", hi, "]"));
  }
  return value;
}

absl::StatusOr<int64_t> KernelParams::IntInRange(absl::string_view key,
                                                 int64_t lo, int64_t hi,
                                                 int64_t fallback) const {
  absl::StatusOr<const nlohmann::json*> value = Find(key);
  if (!value.ok()) return value.status();
  if (*value == nullptr) return fallback;
  return IntInRange(key, lo, hi);
}

absl::Status KernelParams::CheckAllUsed() const {
  if (!json_.is_object()) return absl::OkStatus();
  for (const auto& [key, value] : json_.items()) {
    if (used_.find(key) != used_.end()) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(key), ": unknown parameter (known: ",
                     used_.empty() ? "none" : absl::StrJoin(used_, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace tessel
