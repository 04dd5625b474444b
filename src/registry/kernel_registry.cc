#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tessel/registry.h"

namespace tessel {
namespace {

bool IsValidName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                    c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

KernelRegistry& KernelRegistry::Global() {
  static auto* registry = new KernelRegistry();
  return *registry;
}

absl::Status KernelRegistry::Register(std::string name, KernelFactory factory) {
  if (!IsValidName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel name \"", name, "\": use letters, digits and _ . : - only"));
  }
  if (!factory) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel \"", name, "\": the factory is empty"));
  }
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = factories_.emplace(name, std::move(factory));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("kernel \"", name, "\" is registered twice"));
  }
  return absl::OkStatus();
}

absl::Status KernelRegistry::Register(std::string name,
                                      PlainKernelFactory factory) {
  if (!factory) return Register(std::move(name), KernelFactory());
  return Register(std::move(name),
                  [factory = std::move(factory)](const nlohmann::json& params,
                                                 const Target&) {
                    return factory(params);
                  });
}

bool KernelRegistry::Contains(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  return factories_.find(name) != factories_.end();
}

std::vector<std::string> KernelRegistry::Names() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

absl::StatusOr<Program> KernelRegistry::Build(
    absl::string_view name, const nlohmann::json& params) const {
  return Build(name, params, Target::sm90a());
}

absl::StatusOr<Program> KernelRegistry::Build(absl::string_view name,
                                              const nlohmann::json& params,
                                              const Target& target) const {
  KernelFactory factory;
  {
    absl::MutexLock lock(&mu_);
    auto it = factories_.find(name);
    if (it == factories_.end()) {
      std::vector<std::string> names;
      for (const auto& [known, f] : factories_) names.push_back(known);
      return absl::NotFoundError(
          absl::StrCat("unknown kernel \"", name, "\"; registered kernels: ",
                       names.empty() ? "(none)" : absl::StrJoin(names, ", ")));
    }
    factory = it->second;
  }
  if (!params.is_null() && !params.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("params: expected an object, got ", params.type_name()));
  }
  if (!target.status().ok()) return target.status();
  // The factory runs outside the lock: it may itself look kernels up.
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return factory(params.is_null() ? kEmpty : params, target);
}

namespace internal {
namespace {

bool DieUnlessOk(const absl::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "tessel: TESSEL_REGISTER_KERNEL: %s\n",
                 std::string(status.message()).c_str());
    std::abort();
  }
  return true;
}

}  // namespace

bool RegisterKernelOrDie(const char* name, KernelFactory factory) {
  return DieUnlessOk(
      KernelRegistry::Global().Register(name, std::move(factory)));
}

bool RegisterKernelOrDie(const char* name, PlainKernelFactory factory) {
  return DieUnlessOk(
      KernelRegistry::Global().Register(name, std::move(factory)));
}

}  // namespace internal
}  // namespace tessel
