#include "src/autotune/tune_key.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "tessel/version.h"
#include "xxhash.h"

namespace tessel::autotuner {
namespace {

// Bump when the key's fields or their meaning change.
constexpr int kKeySchema = 1;

// Fields are length-prefixed, so ("ab", "c") and ("a", "bc") differ.
void Field(std::string& out, absl::string_view name, absl::string_view value) {
  absl::StrAppend(&out, name, ":", value.size(), ":", value, ";");
}

}  // namespace

nlohmann::json TuneKey::Fields() const {
  nlohmann::json json;
  json["kernel"] = kernel;
  json["tensors"] = tensors;
  json["extra"] = extra;
  json["device"] = device;
  json["arch"] = arch;
  json["tessel_version"] = tessel_version;
  json["compile"] = compile;
  json["space"] = space;
  return json;
}

std::string TuneKey::Hash() const {
  std::string text;
  Field(text, "schema", absl::StrCat(kKeySchema));
  Field(text, "kernel", kernel);
  Field(text, "tensors", absl::StrCat(tensors.size()));
  for (const std::string& t : tensors) Field(text, "tensor", t);
  Field(text, "extra", extra);
  Field(text, "device", device);
  Field(text, "arch", arch);
  Field(text, "tessel_version", tessel_version);
  Field(text, "compile", compile);
  Field(text, "space", space.dump());
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

std::string TuneKey::FileName() const {
  std::string name;
  for (char c : kernel) {
    if (name.size() >= 48) break;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_' || c == '-';
    name += plain ? c : '_';
  }
  if (name.empty()) name = "kernel";
  return absl::StrCat(name, ".", Hash(), ".json");
}

TuneKey MakeTuneKey(const TuneRequest& request,
                    const std::vector<TuneConfig>& configs,
                    const DeviceIdentity& device,
                    const CompileOptions& compile) {
  TuneKey key;
  key.kernel = request.kernel;
  for (const TensorView& t : request.args) {
    std::string text = t.ToString();
    if (!t.strides.empty()) {
      absl::StrAppend(&text, " strides");
      for (int64_t s : t.strides) absl::StrAppend(&text, " ", s);
    }
    key.tensors.push_back(std::move(text));
  }
  key.extra = request.key_extra;
  key.device = device.name;
  key.arch = device.arch;
  key.tessel_version = std::string(version());
  key.compile = absl::StrCat(compile.pass_config.ToString(),
                             " fast_math=", compile.fast_math);
  key.space = nlohmann::json::array();
  for (const TuneConfig& c : configs) {
    key.space.push_back(nlohmann::json::parse(c.ToJson()));
  }
  return key;
}

}  // namespace tessel::autotuner
