#include "src/autotune/tune_store.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "jit/cache_directory.h"
#include "jit/cache_files.h"
#include "jit/disk_cache.h"
#include "tessel/version.h"

namespace tessel::autotuner {
namespace {

namespace fs = std::filesystem;

nlohmann::json ConfigJson(const TuneConfig& config) {
  return nlohmann::json::parse(config.ToJson());
}

}  // namespace

TuneStore TuneStore::FromOptions(const std::string& dir) {
  if (!dir.empty()) return TuneStore(dir);
  jit::DiskCacheOptions cache = jit::DiskCacheOptions::FromEnv();
  if (!cache.enabled) {
    TuneStore off;
    off.switched_off_ = true;
    off.disabled_reason_ = "switched off (TESSEL_CACHE=off)";
    return off;
  }
  if (cache.dir.empty()) {  // TESSEL_CACHE_DIR set but empty: not "./"
    TuneStore none;
    none.disabled_reason_ = jit::EmptyCacheRootReason();
    return none;
  }
  return TuneStore((fs::path(cache.dir) / "autotune").string());
}

TuneStore::TuneStore(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) {
    disabled_reason_ = "no folder given";
    return;
  }
  if (absl::Status made = jit::MakePrivateDirs(dir_); !made.ok()) {
    disabled_reason_ = std::string(made.message());
    return;
  }
  if (std::string why = jit::UnsafeFolderReason(dir_); !why.empty()) {
    disabled_reason_ = std::move(why);
    return;
  }
  enabled_ = true;
}

std::string TuneStore::PathFor(const TuneKey& key) const {
  return (fs::path(dir_) / key.FileName()).string();
}

std::optional<StoredTune> TuneStore::Load(const TuneKey& key,
                                          std::string* warning) const {
  warning->clear();
  if (!enabled_) return std::nullopt;
  const std::string path = PathFor(key);
  absl::StatusOr<std::string> text = jit::ReadWholeFile(path);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) {
      *warning = std::string(text.status().message());
    }
    return std::nullopt;
  }
  auto ignore = [&](std::string why) -> std::optional<StoredTune> {
    *warning = absl::StrCat("ignoring ", path, ": ", why);
    return std::nullopt;
  };
  const nlohmann::json json =
      nlohmann::json::parse(*text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return ignore("not valid JSON (a damaged file)");
  }
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = json.find(name);
    return it == json.end() ? nullptr : &*it;
  };
  const nlohmann::json* schema = field("schema");
  if (schema == nullptr || !schema->is_number_integer() ||
      schema->get<int64_t>() != kStoreSchema) {
    return ignore(absl::StrCat("another file format (schema ",
                               schema != nullptr ? schema->dump() : "none",
                               ", this tessel reads ", kStoreSchema, ")"));
  }
  const nlohmann::json* written_by = field("tessel_version");
  if (written_by == nullptr || !written_by->is_string() ||
      written_by->get<std::string>() != version()) {
    return ignore(
        absl::StrCat("written by tessel ",
                     written_by != nullptr ? written_by->dump() : "(unknown)",
                     ", this is ", std::string(version())));
  }
  const nlohmann::json* stored_key = field("key");
  if (stored_key == nullptr || *stored_key != key.Hash()) {
    return ignore("it belongs to another key");
  }
  const nlohmann::json fields = key.Fields();
  for (const auto& [name, value] : fields.items()) {
    const nlohmann::json* stored = field(name.c_str());
    if (stored == nullptr || *stored != value) {
      return ignore(absl::StrCat("its \"", name, "\" differs from the key's"));
    }
  }
  const nlohmann::json* best = field("best");
  const nlohmann::json* best_ms = field("best_ms");
  if (best == nullptr || best_ms == nullptr || !best_ms->is_number() ||
      best_ms->get<double>() < 0) {
    return ignore("no usable \"best\" and \"best_ms\"");
  }
  absl::StatusOr<TuneConfig> config = TuneConfig::FromJson(best->dump());
  if (!config.ok()) return ignore(std::string(config.status().message()));
  const nlohmann::json& space = key.space;
  const nlohmann::json canonical = ConfigJson(*config);
  if (std::find(space.begin(), space.end(), canonical) == space.end()) {
    return ignore(absl::StrCat("its best config ", config->ToString(),
                               " is not in the space"));
  }
  StoredTune tune;
  tune.best = *std::move(config);
  tune.best_ms = best_ms->get<double>();
  return tune;
}

absl::Status TuneStore::Save(const TuneKey& key, const StoredTune& tune) const {
  if (!enabled_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the autotune store is off: ", disabled_reason_));
  }
  nlohmann::json json = key.Fields();
  json["schema"] = kStoreSchema;
  json["key"] = key.Hash();
  json["best"] = ConfigJson(tune.best);
  json["best_ms"] = tune.best_ms;
  json["created_unix"] = absl::ToUnixSeconds(absl::Now());
  nlohmann::json candidates = nlohmann::json::array();
  for (const TuneCandidate& c : tune.candidates) {
    nlohmann::json record;
    record["config"] = ConfigJson(c.config);
    record["outcome"] = TuneOutcomeName(c.outcome);
    if (c.outcome == TuneOutcome::kTimed) record["ms"] = c.ms;
    if (!c.status.ok()) {
      // The first line: compiler logs would make the file unreadable.
      absl::string_view why = c.status.message();
      record["error"] = std::string(why.substr(0, why.find('\n')));
    }
    candidates.push_back(std::move(record));
  }
  json["candidates"] = std::move(candidates);
  json["skipped_for_budget"] = std::count_if(
      tune.candidates.begin(), tune.candidates.end(),
      [](const auto& c) { return c.outcome == TuneOutcome::kSkippedBudget; });
  // Dumped with replacement: a compiler message need not be valid UTF-8.
  return jit::WriteFileAtomically(
      PathFor(key),
      json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
          "\n");
}

}  // namespace tessel::autotuner
